#!/usr/bin/env bash
# Fine-tune pi0.5 with LoRA on a dataset from `agentic-env collect`, as the AgenticLab paper's
# VLA baseline (Sec. VI-E, Fig. 8(b); set-up of its Table VI): pi0.5-base, vision encoder
# frozen, LoRA on the attention and FFN linear projections of the VLM backbone and of the
# flow-matching action expert, 10,000 steps at batch 64 (the paper: ~38 h on one A6000).
#
# Needs a CUDA GPU (about 48 GB for batch 64), the 'vla' extra plus peft
# (pip install -e '.[vla]' 'lerobot[peft,pi]==0.6.1') and the Hugging Face Hub (the
# lerobot/pi05_base weights). Without a GPU it says so and exits 0, training nothing.
#
# Usage: scripts/train_pi05_lora.sh TASK [DATASET] [OUT]
#   TASK     sorting or stacking (the paper's tasks)
#   DATASET  LeRobot dataset folder (default runs/datasets/TASK-640x360; collected here with
#            the paper's demonstration count, 40 sorting / 30 stacking, if missing)
#   OUT      training output folder (default runs/policies/TASK-pi05); evaluate with
#            agentic-env run --task TASK --agent policy --agent-option checkpoint=OUT
# Deviation from Table VI: lerobot-train's PEFT options take one rank for all adapted layers,
# so the action expert gets the backbone's (r, alpha) = (16, 16) instead of (32, 32).
# Environment: STEPS and BATCH_SIZE override 10000 and 64 (e.g. for a smaller GPU).
set -euo pipefail

task="${1:?usage: $0 TASK [DATASET] [OUT]}"
case "$task" in
  sorting) demos=40 ;;
  stacking) demos=30 ;;
  *) echo "TASK must be sorting or stacking (the paper's VLA tasks), got '$task'" >&2; exit 2 ;;
esac
dataset="${2:-runs/datasets/$task-640x360}"
out="${3:-runs/policies/$task-pi05}"
python="${PYTHON:-python}"

if ! "$python" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" \
    2>/dev/null; then
  echo "no CUDA GPU here (or no torch): pi0.5 LoRA fine-tuning needs one; nothing trained."
  echo "On this machine, train the small CPU policy instead: agentic-env train-policy --task $task"
  exit 0
fi

if [ ! -f "$dataset/meta/info.json" ]; then
  agentic-env collect --task "$task" --episodes "$demos" --seed-start 1000 --out "$dataset"
fi

# LoRA targets: q/k/v/o and gate/up/down projections of the Gemma backbone (language_model)
# and of the action expert (gemma_expert); the vision tower is frozen and not adapted.
targets='.*(language_model|gemma_expert)\..*\.(self_attn\.(q|k|v|o)_proj|mlp\.(gate|up|down)_proj)'

exec lerobot-train \
  --dataset.repo_id="local/$(basename "$dataset")" --dataset.root="$dataset" \
  --policy.type=pi05 --policy.pretrained_path=lerobot/pi05_base \
  --policy.freeze_vision_encoder=true --policy.push_to_hub=false --policy.device=cuda \
  --peft.method_type=LORA --peft.r=16 --peft.lora_alpha=16 --peft.target_modules="$targets" \
  --steps="${STEPS:-10000}" --batch_size="${BATCH_SIZE:-64}" \
  --output_dir="$out" --job_name="agentic-env-$task-pi05"
