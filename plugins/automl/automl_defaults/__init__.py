"""automl: automl-core with its default plugins (see the distribution's README).

The engine names no plugin; this distribution is where the choice of defaults lives: the
named recipes ``default-classification`` and ``default-regression`` (the estimators' and the
command line's defaults), and, through its dependencies, every plugin they name.
"""
