"""Perception toolkit shared by the agents: a camera stack's depth post-processing, RGB-D to
base-frame point clouds, lifting pointed pixels and boxes to 3D, target segmentation,
antipodal grasp candidates collision-checked against the fin-ray gripper's geometry, and
pictures for traces and VLM grasp evaluation (one candidate, or several numbered on one
sheet).

Everything reads only the observation contract (:mod:`agentic_env.contract.spaces`), never
privileged simulator state, so it runs unchanged on the real robot.
"""

from agentic_env.agents.perception.depth_filter import (
    DepthNoise,
    DepthProfile,
    camera_profile,
    filter_depth,
    height_noise,
)
from agentic_env.agents.perception.drawing import (
    draw_detections,
    numbered_sheet,
    render_grasp,
)
from agentic_env.agents.perception.geometry import (
    Plane,
    estimate_normals,
    fit_plane,
    near_mask,
    neighbour_counts,
    voxel_downsample,
)
from agentic_env.agents.perception.grasping import (
    GraspCandidate,
    grasp_candidates,
    grasp_collides,
)
from agentic_env.agents.perception.gripper import GripperGeometry, gripper_geometry
from agentic_env.agents.perception.pointcloud import (
    PointCloud,
    box_cloud,
    camera_cloud,
    camera_depth,
    lift_pixel,
    project_to_image,
    remove_gripper,
)
from agentic_env.agents.perception.segmentation import (
    cluster_near,
    remove_support_plane,
    remove_table,
    seen_table_height,
    table_height,
    target_cloud,
)

__all__ = [
    "DepthNoise",
    "DepthProfile",
    "GraspCandidate",
    "GripperGeometry",
    "Plane",
    "PointCloud",
    "box_cloud",
    "camera_cloud",
    "camera_depth",
    "camera_profile",
    "cluster_near",
    "draw_detections",
    "estimate_normals",
    "filter_depth",
    "fit_plane",
    "grasp_candidates",
    "grasp_collides",
    "gripper_geometry",
    "height_noise",
    "lift_pixel",
    "near_mask",
    "neighbour_counts",
    "numbered_sheet",
    "project_to_image",
    "remove_gripper",
    "remove_support_plane",
    "remove_table",
    "render_grasp",
    "seen_table_height",
    "table_height",
    "target_cloud",
    "voxel_downsample",
]
