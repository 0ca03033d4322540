"""View models used only by the app, the HTML report and the CLI: figures, highlighting, report, lab state."""
