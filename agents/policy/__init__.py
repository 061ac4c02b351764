"""A LeRobot policy as an agent: ``--agent policy --agent-option checkpoint=DIR``.

The checkpoint (a ``pretrained_model`` folder: ``config.json``, ``model.safetensors`` and the
processor files LeRobot saves beside them) is loaded with LeRobot's own classes; the policy
sees each observation as the dataset exporter names it
(:func:`agentic_env.contract.features.frame_features`) and drives the env one control period
at a time in the ``joint_position`` action space the exporter records as ``action``.
``lerobot`` and ``torch`` are imported on first use only
(:func:`~agentic_env.agents.policy.checkpoint.require_lerobot`).
"""
