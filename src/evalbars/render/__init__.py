"""What is shown: the text forms of the tables (Markdown, LaTeX, CSV), the report's first screen
and the figures."""
