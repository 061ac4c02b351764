"""Scripted-expert demonstrations recorded at the control rate, as LeRobot v3.0 datasets.

* :mod:`~agentic_env.datasets.recording`: run the expert and record every control period;
* :mod:`~agentic_env.datasets.lerobot_format`: the dataset layout, written with pyarrow;
* :mod:`~agentic_env.datasets.stats`: LeRobot's feature statistics, quantiles included;
* :mod:`~agentic_env.datasets.video`: MP4 encoding with the ffmpeg of ``imageio-ffmpeg``;
* :mod:`~agentic_env.datasets.collect`: ``agentic-env collect`` (parallel, resumable);
* :mod:`~agentic_env.datasets.reader`: load a dataset and verify it frame by frame;
* :mod:`~agentic_env.datasets.replay`: open-loop replay of recorded actions.

The command lines (``collect``, ``check-dataset``, ``replay-demo``) are in
:mod:`agentic_env.cli.datasets`, ``bench-collect`` in :mod:`agentic_env.cli.bench.collect`.
Writing and reading need the ``data`` extra (pyarrow).
"""
