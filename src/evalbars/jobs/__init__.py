"""One function per workflow job."""
