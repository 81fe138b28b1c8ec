"""CountedHistogram is exposed exactly as the client library's Histogram with the same observations."""

import pytest
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from telemetry_gateway.metrics import LATENCY_BUCKETS, CountedHistogram


def test_counted_observations_expose_like_single_ones():
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    counted = CountedHistogram("lat_seconds", "Latency", LATENCY_BUCKETS, registry=ours)
    reference = Histogram("lat_seconds", "Latency", buckets=LATENCY_BUCKETS, registry=theirs)
    # on a bound, between bounds, past the last bound, zero
    for amount, count in ((0.05, 3), (0.0123, 1), (400.0, 2), (0.0, 5), (0.001, 1), (0.0501, 4)):
        counted.observe(amount, count)
        for _ in range(count):
            reference.observe(amount)

    def exposition(registry):
        return [line for line in generate_latest(registry).decode().splitlines()
                if "_created" not in line and "_sum" not in line]

    def total(registry):
        return registry.get_sample_value("lat_seconds_sum")

    assert exposition(ours) == exposition(theirs)
    assert total(ours) == pytest.approx(total(theirs)) == 800.3637  # a product instead of a sum of 2 terms
    assert 'lat_seconds_bucket{le="0.05"} 10.0' in exposition(ours)
    assert "lat_seconds_count 16.0" in exposition(ours)
