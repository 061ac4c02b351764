"""The MuJoCo simulation of the workcell (privileged state included); never imported by agents."""
