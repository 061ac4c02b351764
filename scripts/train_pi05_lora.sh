#!/usr/bin/env bash
# Fine-tune pi0.5 with LoRA on a dataset from `agentic-env collect`, as the AgenticLab paper's
# VLA baseline (Sec. VI-E, Fig. 8(b); set-up of its Table VI): pi0.5-base, vision encoder
# frozen, LoRA on the attention and FFN linear projections of the VLM backbone and of the
# flow-matching action expert, 10,000 steps at batch 64 (the paper: ~38 h on one A6000), on
# the paper's demonstration counts (40 sorting / 30 stacking), saving a checkpoint every
# SAVE_FREQ steps; then `lerobot-eval` on evaluation seeds the demonstrations never used.
#
# Needs a CUDA GPU (about 48 GB for batch 64) and the 'vla' extra plus peft
# (pip install -e '.[vla]' 'lerobot[peft,pi]==0.6.1'). Without a GPU it says so and exits 0,
# training nothing.
#
# Usage: scripts/train_pi05_lora.sh TASK [DATASET] [OUT]
#   TASK     sorting or stacking (the paper's tasks)
#   DATASET  LeRobot dataset folder (default runs/datasets/TASK-640x360; collected here with
#            the paper's demonstration count from the reserved demonstration seeds,
#            1000000 on, if missing); its first 40 (sorting) / 30 (stacking) episodes are used
#   OUT      training output folder (default runs/policies/TASK-pi05): checkpoints/STEP/ and
#            checkpoints/last/ (each pretrained_model/ records the demonstration seeds), and
#            eval/ (lerobot-eval's eval_info.json). Evaluate it in the harness with
#            agentic-env run --task TASK --agent policy --agent-option checkpoint=OUT
#
# Offline (no Hugging Face Hub): point at local copies of the base checkpoint and of the
# PaliGemma tokenizer; with both local, HF_HUB_OFFLINE=1 is set and nothing is downloaded.
#   PI05_BASE       folder of lerobot/pi05_base (config.json, model.safetensors, processors)
#   PI05_TOKENIZER  folder of the google/paligemma-3b-pt-224 tokenizer (needs PI05_BASE: the
#                   base's preprocessor is pointed at it in a copy, OUT-base/, made here)
# Prepare them once on a machine with network (the PaliGemma repository is gated: accept its
# licence on the Hub and `huggingface-cli login` first), then copy the folders over:
#   huggingface-cli download lerobot/pi05_base --local-dir models/pi05_base
#   huggingface-cli download google/paligemma-3b-pt-224 tokenizer.model tokenizer.json \
#       tokenizer_config.json special_tokens_map.json --local-dir models/paligemma-tokenizer
#   PI05_BASE=models/pi05_base PI05_TOKENIZER=models/paligemma-tokenizer \
#       scripts/train_pi05_lora.sh stacking
#
# Other settings (environment): STEPS (10000), BATCH_SIZE (64), SAVE_FREQ (1000: checkpoints
# every 1000 steps and at the end), EVAL_EPISODES (20), EVAL_SEED (0: evaluation seeds
# EVAL_SEED.. , in 0-999999 and none of the dataset's; checked before training), PYTHON.
# Deviation from Table VI: lerobot-train's PEFT options take one rank for all adapted layers,
# so the action expert gets the backbone's (r, alpha) = (16, 16) instead of (32, 32).
set -euo pipefail

usage="usage: $0 TASK [DATASET] [OUT]"
task="${1:?$usage}"
case "$task" in
  sorting) demos=40 ;;
  stacking) demos=30 ;;
  *) echo "TASK must be sorting or stacking (the paper's VLA tasks), got '$task'" >&2; exit 2 ;;
esac
dataset="${2:-runs/datasets/$task-640x360}"
out="${3:-runs/policies/$task-pi05}"
python="${PYTHON:-python}"
base="${PI05_BASE:-lerobot/pi05_base}"
tokenizer="${PI05_TOKENIZER:-}"
eval_episodes="${EVAL_EPISODES:-20}"
eval_seed="${EVAL_SEED:-0}"

if [ -n "${PI05_BASE:-}" ]; then
  for file in config.json model.safetensors; do
    if [ ! -f "$PI05_BASE/$file" ]; then
      echo "PI05_BASE=$PI05_BASE has no $file: download lerobot/pi05_base there with" \
           "huggingface-cli download lerobot/pi05_base --local-dir $PI05_BASE" >&2
      exit 2
    fi
  done
fi
if [ -n "$tokenizer" ]; then
  if [ -z "${PI05_BASE:-}" ]; then
    echo "PI05_TOKENIZER needs PI05_BASE as well: the tokenizer path is written into a copy" \
         "of the local base's policy_preprocessor.json" >&2
    exit 2
  fi
  if [ ! -f "$tokenizer/tokenizer_config.json" ] || \
     [ ! -f "$PI05_BASE/policy_preprocessor.json" ]; then
    echo "PI05_TOKENIZER=$tokenizer needs tokenizer_config.json and PI05_BASE=$PI05_BASE" \
         "policy_preprocessor.json: prepare the local copies as this script's header says" >&2
    exit 2
  fi
fi

# Before hours of training: the paper's count of episodes, and evaluation seeds the dataset
# never used; prints the cameras' width and height.
check_dataset() {
  "$python" - "$dataset" "$demos" "$eval_seed" "$eval_episodes" <<'EOF'
import json
import sys
from pathlib import Path

from agentic_env.contract.seeds import check_unseen, read_seeds
from agentic_env.errors import AgenticEnvError

root, demos, seed, count = Path(sys.argv[1]), *map(int, sys.argv[2:])
info = json.loads((root / "meta/info.json").read_text())
problem = ""
if info["total_episodes"] < demos:
    problem = (f"{root} holds {info['total_episodes']} episodes; the paper's count is {demos}: "
               f"agentic-env collect --out {root} --episodes {demos} (same options) adds them")
try:
    check_unseen(range(seed, seed + count), read_seeds(root / "meta"), f"the dataset {root}")
except AgenticEnvError as error:
    problem = problem or f"EVAL_SEED={seed}, EVAL_EPISODES={count}: {error}"
if problem:
    print(problem, file=sys.stderr)
    sys.exit(2)
height, width = info["features"]["observation.images.shoulder"]["shape"][:2]
print(width, height)
EOF
}
if [ -f "$dataset/meta/info.json" ]; then  # a given dataset is checked here, GPU or not
  check_dataset >/dev/null
fi

if ! "$python" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" \
    2>/dev/null; then
  echo "no CUDA GPU here (or no torch): pi0.5 LoRA fine-tuning needs one; nothing trained."
  echo "On this machine, train the small CPU policy instead: agentic-env train-policy --task $task"
  exit 0
fi

if [ -n "${PI05_BASE:-}" ] && [ -n "$tokenizer" ]; then
  export HF_HUB_OFFLINE=1
  echo "local base and tokenizer: HF_HUB_OFFLINE=1, nothing is downloaded"
fi

if [ ! -f "$dataset/meta/info.json" ]; then
  agentic-env collect --task "$task" --episodes "$demos" --out "$dataset"
fi
dataset="$(cd "$dataset" && pwd)"  # absolute: train_config.json names it for the seed check
size="$(check_dataset)"
read -r width height <<< "$size"

if [ -n "${PI05_BASE:-}" ]; then
  base="$(cd "$PI05_BASE" && pwd)"  # absolute: the LoRA adapter names its base by this path
fi
if [ -n "$tokenizer" ]; then  # a copy of the base whose preprocessor loads the local tokenizer
  mkdir -p "$out-base"
  base="$(cd "$out-base" && pwd)"
  "$python" - "$PI05_BASE" "$tokenizer" "$base" <<'EOF'
import json
import os
import sys
from pathlib import Path

source, tokenizer, copy = (Path(arg).resolve() for arg in sys.argv[1:])
for item in source.iterdir():
    if item.name != "policy_preprocessor.json" and not os.path.lexists(copy / item.name):
        (copy / item.name).symlink_to(item)
config = json.loads((source / "policy_preprocessor.json").read_text())
steps = [s for s in config["steps"] if s.get("registry_name") == "tokenizer_processor"]
if len(steps) != 1:
    sys.exit(f"{source}/policy_preprocessor.json has no tokenizer_processor step to point at "
             f"{tokenizer}")
steps[0]["config"]["tokenizer_name"] = str(tokenizer)
(copy / "policy_preprocessor.json").write_text(json.dumps(config, indent=2))
EOF
fi

# LoRA targets: q/k/v/o and gate/up/down projections of the Gemma backbone (language_model)
# and of the action expert (gemma_expert); the vision tower is frozen and not adapted.
targets='.*(language_model|gemma_expert)\..*\.(self_attn\.(q|k|v|o)_proj|mlp\.(gate|up|down)_proj)'

lerobot-train \
  --dataset.repo_id="local/$(basename "$dataset")" --dataset.root="$dataset" \
  --dataset.episodes="[$(seq -s, 0 $((demos - 1)))]" \
  --policy.type=pi05 --policy.pretrained_path="$base" \
  --policy.freeze_vision_encoder=true --policy.push_to_hub=false --policy.device=cuda \
  --peft.method_type=LORA --peft.r=16 --peft.lora_alpha=16 --peft.target_modules="$targets" \
  --steps="${STEPS:-10000}" --batch_size="${BATCH_SIZE:-64}" --save_freq="${SAVE_FREQ:-1000}" \
  --output_dir="$out" --job_name="agentic-env-$task-pi05"

# Every checkpoint records the seeds it was trained on (--agent policy refuses them).
if [ -f "$dataset/meta/demonstration_seeds.json" ]; then
  for folder in "$out"/checkpoints/*/pretrained_model; do
    cp "$dataset/meta/demonstration_seeds.json" "$folder/"
  done
fi

lerobot-eval \
  --env.type=agentic_env --env.task="$task" --env.setting=lab \
  --env.observation_width="$width" --env.observation_height="$height" \
  --policy.path="$out/checkpoints/last/pretrained_model" --policy.device=cuda \
  --eval.n_episodes="$eval_episodes" --eval.batch_size=1 --seed="$eval_seed" \
  --output_dir="$out/eval"
