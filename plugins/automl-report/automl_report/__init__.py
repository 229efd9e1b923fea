"""A run's report and live dashboard: ``automl report RUN_DIR`` writes one self-contained HTML
page (figures as PNG files beside it) from the run folder's history; ``automl dashboard
RUN_DIR`` serves the same page on 127.0.0.1, drawn again whenever the history changes.

The history (``history.sqlite``, opened read-only) and ``summary.json`` are the only
sources: what a run did not record, the page says it did not record. Nothing is imported
here, so that loading the plugin (``automl_report.plugin``) imports no matplotlib;
:func:`automl_report.render.render_report` draws a page."""
