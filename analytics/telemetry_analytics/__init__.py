"""Spark jobs over the telemetry keyspace: daily aggregates (daily_summary) and monthly reports.

Pure modules (local_days, selection, job_options, report_config, report_model, day_figures, intraday, time_axis,
report_render, report_charts, svg_charts) hold the logic and are unit-tested without Spark; daily_aggregates,
cassandra_io, daily_job, report_job and spark_session are the edges that touch Spark and Cassandra, java_stores runs
keytool and openssl, cli is the jobs' entry point.
"""
