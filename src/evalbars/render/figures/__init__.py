"""Every figure evalbars draws, one module per topic, under one shared style (:mod:`.style`).

Figure functions are pure: they take tidy tables and return a
:class:`matplotlib.figure.Figure`; only :func:`.style.save_figure` writes files
(PNG and SVG, with fixed metadata so that the same data give the same bytes).
No statistics module imports matplotlib; the figures import the statistics.
"""
