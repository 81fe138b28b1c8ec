"""Spark jobs over the telemetry keyspace: daily aggregates (daily_summary) and monthly reports.

Pure modules (local_days, selection, report_model, report_markdown, report_html, svg_charts) hold the logic and
are unit-tested without Spark; the *_spark and cassandra_io modules are the edges that touch Spark and Cassandra.
"""
