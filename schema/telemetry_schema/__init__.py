"""The schema runner behind schema/migrate: the numbered CQL migrations and the roles, applied once each."""
