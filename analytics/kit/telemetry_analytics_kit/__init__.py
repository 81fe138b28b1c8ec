"""What the analytics jobs are tested, benchmarked and demonstrated with, outside the product package: synthetic
greenhouse history written as the gateway writes it (loader, from the simulated boards' greenhouse model), the
independent reference computation (reference), job runs and their checks (checks), the benchmark and the demo's
readings."""
