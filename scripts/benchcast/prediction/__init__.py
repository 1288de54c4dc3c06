"""Predictions for devices a study does not have: the fitted models applied to spec cards, the
answers per card and series, and one run's models scored on another's devices."""
