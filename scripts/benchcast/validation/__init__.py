"""Held-out-device validation: does a model predict a device it never saw?

* :mod:`.folds`: leave-one-device-out folds of simple (``loo_simple``) and multiple
  (``loo_multiple``) models, the baseline (the mean of the other devices);
* :mod:`.choice`: the paper's and the held-out choice (``select_simple``, ``select_multiple``),
  how the nested choice ranks (``rank_models``; ``Nested`` says how) and its models on all devices
  (``select_nested``);
* :mod:`.intervals`: intervals widened where a prediction lies beyond the measured devices
  (``interval_spread``, ``widen``);
* :mod:`.verdicts`: tiers (interior or extreme held-out devices) and a verdict per series;
* :mod:`.acceptance`: issue 10's acceptance criteria over those tables;
* :mod:`.nested`: the nested choice, from every model or from those a spec card's figures allow;
* :mod:`.cards`: each card's answer from its own figures, the error of the procedure that made it,
  and the figure worth asking for;
* :mod:`.study`: :func:`run_study`, all of it for one study (:class:`Study`, :class:`Settings`), and
  :func:`run_cards`, the cards' answers.

The package exports :func:`run_study`, :func:`run_cards`, :class:`Study` and :class:`Settings`;
everything else is imported from its module (``from benchcast.validation import folds``).
"""

from .study import Settings, Study, run_cards, run_study

__all__ = ["Settings", "Study", "run_cards", "run_study"]
