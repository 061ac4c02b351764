"""A LeRobot policy as an agent: ``--agent policy --agent-option checkpoint=DIR``.

The checkpoint (a ``pretrained_model`` folder: ``config.json``, ``model.safetensors`` and the
processor files LeRobot saves beside them) is loaded with LeRobot's own classes; the policy
sees each observation as the dataset exporter names it
(:func:`agentic_env.contract.features.frame_features`) and drives the env one control period
at a time in the ``joint_position`` action space the exporter records as ``action``.
``lerobot`` and ``torch`` are imported on first use only
(:func:`~agentic_env.agents.policy.checkpoint.require_lerobot`). Every policy family of
LeRobot 0.6.1 loads with the ``vla`` extra (ACT, Diffusion, π0/π0.5, SmolVLA, LoRA adapters);
a missing package or hub model is the project's error naming the install or the path
(:mod:`~agentic_env.agents.policy.loading`), and the policy's cameras, image sizes, state and
action are checked against the env's before the first step, images resampled only with
``--agent-option resize=true`` (:mod:`~agentic_env.agents.policy.inputs`).
"""
