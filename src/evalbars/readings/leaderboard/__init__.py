"""readings.leaderboard."""
