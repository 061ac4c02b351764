"""Scene composition: floor, table, robot on its mount, shoulder camera, props, dressing.

:class:`SceneBuilder` assembles an ``MjSpec`` programmatically and deterministically. The
world frame has z up with the floor at z = 0; the robot base frame sits on the table top at
:attr:`SceneConfig.robot_base_pos` with the same orientation as the world, so base-frame
heights are heights above the table. Keyframes come from the robot only; props are placed
by the task at reset.

The setting's dressing (``scenes/<setting>.toml``) gives the floor, sky, table surface,
lights, procedural textures (:mod:`agentic_env.sim.textures`, every one compiled in so a reset
can switch between them), clutter *distractors* (free bodies at their nominal poses, with a
hidden collision box each) and static *background* scenery (visual only). Per-reset
randomisation of all of these is :func:`agentic_env.sim.dressing.randomize_dressing`.
"""

from __future__ import annotations

import mujoco
import numpy as np

from agentic_env.contract.workcell import ROBOT_PREFIX, TABLE_HEIGHT, SceneConfig
from agentic_env.robot.model import robot_spec
from agentic_env.sim.dressing import (
    CAMERA_MOUNT,
    CAMERA_MOUNT_NOMINAL,
    DROP_HEIGHT,
    FLOOR_MATERIAL,
    KEY_LIGHT,
    SETTING_TEXT,
    TABLE_MATERIAL,
    background_body,
    distractor_body,
    geom_quat,
    nominal_key_light,
    object_bounds,
    rest_height,
    surface_repeat,
    texture_name,
    visual_geom,
)
from agentic_env.sim.props import (
    PROP_FRICTION,
    PROP_SOLREF,
    BinSpec,
    ObjectSpec,
    add_bin,
    add_object,
)
from agentic_env.sim.settings import load_setting
from agentic_env.sim.textures import add_texture, make_texture

_GEOM_TYPES = {
    "box": mujoco.mjtGeom.mjGEOM_BOX,
    "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
    "sphere": mujoco.mjtGeom.mjGEOM_SPHERE,
    "ellipsoid": mujoco.mjtGeom.mjGEOM_ELLIPSOID,
    "capsule": mujoco.mjtGeom.mjGEOM_CAPSULE,
}
#: Geom group of hidden collision proxies (not drawn by the default visual options).
COLLISION_GROUP = 3


def _repeat(value: float | list[float]) -> list[float]:
    return [float(value), float(value)] if np.isscalar(value) else [float(v) for v in value]


def look_at_xyaxes(eye: np.ndarray, target: np.ndarray) -> np.ndarray:
    """MuJoCo camera ``xyaxes`` (6,) looking from ``eye`` at ``target`` with world z up."""
    forward = target - eye
    forward = forward / np.linalg.norm(forward)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right = right / np.linalg.norm(right)
    up = np.cross(right, forward)
    return np.concatenate([right, up])


class SceneBuilder:
    """Build the workcell spec; add props; compile.

    Example::

        builder = SceneBuilder(SceneConfig())
        builder.add_object(ObjectSpec("red_cube", "box", (0.02,) * 3, (1, 0, 0, 1)))
        model = builder.compile()
    """

    def __init__(self, config: SceneConfig) -> None:
        self.config = config
        self.dressing = load_setting(config.setting)
        self.spec = mujoco.MjSpec()
        self.spec.modelname = "agentic_workcell"
        self._set_options()
        self._add_arena()
        self._add_robot()
        self._add_shoulder_camera()
        self._add_overview_camera()
        self._add_distractors()
        self._add_background()

    @property
    def base_pos(self) -> np.ndarray:
        """Robot base origin in the world frame (3,), metres."""
        return np.asarray(self.config.robot_base_pos, dtype=float)

    def _set_options(self) -> None:
        spec, cfg = self.spec, self.config
        spec.option.timestep = cfg.timestep
        spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
        spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
        spec.option.impratio = 10.0
        spec.compiler.autolimits = True
        largest = max(cfg.shoulder_camera.width, cfg.wrist_camera.width, 640)
        spec.visual.global_.offwidth = largest
        spec.visual.global_.offheight = max(cfg.shoulder_camera.height,
                                            cfg.wrist_camera.height, 480)
        spec.stat.extent = 2.0
        spec.stat.center = [0.4, 0.0, TABLE_HEIGHT]
        spec.visual.map.znear = 0.01  # x extent = 2 cm, nearer than the D405's 7 cm
        spec.visual.map.zfar = 25.0  # x extent = 50 m: the skybox is drawn about 25 m away
        # No multisampling: depth is read from the colour pass, and a multisampled buffer
        # would give each pixel the depth of one sample instead of the pixel centre.
        spec.visual.quality.offsamples = 0
        spec.visual.quality.shadowsize = int(self.dressing.key_light["shadow_size"])
        spec.visual.map.shadowclip = float(self.dressing.key_light["shadow_clip"])
        spec.visual.headlight.ambient = self.dressing.headlight["ambient"]
        spec.visual.headlight.diffuse = self.dressing.headlight["diffuse"]
        spec.visual.headlight.specular = [0.0, 0.0, 0.0]

    def _add_arena(self) -> None:
        spec, cfg, dressing = self.spec, self.config, self.dressing
        spec.add_text(name=SETTING_TEXT, data=dressing.name)
        for name, params in dressing.textures.items():  # all of them: resets switch textures
            options = {k: v for k, v in params.items() if k not in ("kind", "repeat")}
            add_texture(spec, texture_name(name), make_texture(params["kind"], **options))
        floor = dressing.floor
        if floor["textures"]:
            floor_texture = texture_name(floor["textures"][0])
        else:
            floor_texture = "floor_tex"
            spec.add_texture(name=floor_texture, type=mujoco.mjtTexture.mjTEXTURE_2D,
                             builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, width=256, height=256,
                             rgb1=floor["checker_rgb1"], rgb2=floor["checker_rgb2"])
        spec.add_texture(name="sky", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
                         builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT, width=64, height=64,
                         rgb1=dressing.sky["top_rgb"], rgb2=dressing.sky["bottom_rgb"])
        first = floor["textures"][0] if floor["textures"] else None
        floor_mat = spec.add_material(name=FLOOR_MATERIAL,
                                      texrepeat=surface_repeat(dressing, floor, first),
                                      texuniform=floor["texture_uniform"], rgba=floor["rgba"],
                                      specular=floor["specular"], reflectance=0.0)
        floor_mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = floor_texture
        table = dressing.table
        table_mat = spec.add_material(name=TABLE_MATERIAL, rgba=table["rgba"],
                                      specular=table["specular"],
                                      texrepeat=surface_repeat(
                                          dressing, table,
                                          table["textures"][0] if table["textures"] else None),
                                      texuniform=table["texture_uniform"])
        if table["textures"]:
            table_mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = texture_name(
                table["textures"][0])
        spec.add_material(name="mount_mat", rgba=[0.25, 0.26, 0.28, 1.0])
        world = spec.worldbody
        half = floor["half_size"]
        world.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[half, half, 0.05],
                       material=FLOOR_MATERIAL, contype=1, conaffinity=3)
        x0, x1, y0, y1 = cfg.table_extent
        base = self.base_pos
        thickness = 0.04
        world.add_geom(
            name="table", type=mujoco.mjtGeom.mjGEOM_BOX,
            size=[(x1 - x0) / 2, (y1 - y0) / 2, thickness / 2],
            pos=[base[0] + (x0 + x1) / 2, base[1] + (y0 + y1) / 2, base[2] - thickness / 2],
            material=TABLE_MATERIAL, contype=1, conaffinity=3, solref=[0.005, 1.0],
            friction=[1.0, 0.01, 0.001], condim=4,
        )
        leg_height = base[2] - thickness
        for lx in (x0 + 0.05, x1 - 0.05):
            for ly in (y0 + 0.05, y1 - 0.05):
                world.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.03, 0.03, leg_height / 2],
                               pos=[base[0] + lx, base[1] + ly, leg_height / 2],
                               material="mount_mat", contype=0, conaffinity=0)
        key = dressing.key_light
        light = world.add_light(name=KEY_LIGHT, diffuse=key["diffuse"],
                                specular=key["specular"], castshadow=key["cast_shadow"])
        light.type = mujoco.mjtLightType.mjLIGHT_DIRECTIONAL
        # the nominal dressing's direction and position (the light's shadow frustum is
        # centred on the work area whatever the direction)
        nominal = nominal_key_light(dressing, base)
        light.dir = nominal["dir"]
        light.pos = nominal["pos"]

    def _add_robot(self) -> None:
        frame = self.spec.worldbody.add_frame(pos=self.base_pos)
        self.spec.attach(robot_spec(), prefix=ROBOT_PREFIX, frame=frame)

    def _add_shoulder_camera(self) -> None:
        cfg = self.config
        eye = self.base_pos + np.asarray(cfg.shoulder_camera_pos)
        target = self.base_pos + np.asarray(cfg.shoulder_camera_target)
        xyaxes = look_at_xyaxes(eye, target)
        body = self.spec.worldbody.add_body(name=CAMERA_MOUNT, pos=eye)
        self.spec.add_numeric(name=CAMERA_MOUNT_NOMINAL, data=[*eye, 1.0, 0.0, 0.0, 0.0],
                              size=7)
        forward = np.cross(xyaxes[:3], xyaxes[3:])  # camera +z points backwards
        # Azure Kinect housing: 103 x 39 x 126 mm, behind the lens.
        rot = np.column_stack([xyaxes[:3], xyaxes[3:], forward])
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, rot.flatten())
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.0515, 0.0195, 0.063],
                      pos=forward * 0.065, quat=quat, rgba=[0.12, 0.12, 0.13, 1.0],
                      contype=0, conaffinity=0)
        camera = body.add_camera(name=cfg.shoulder_camera.name, fovy=cfg.shoulder_camera.fovy_deg)
        camera.alt.type = mujoco.mjtOrientation.mjORIENTATION_XYAXES
        camera.alt.xyaxes = xyaxes
        pole_top = eye - [0.0, 0.0, 0.07]
        self.spec.worldbody.add_geom(
            type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[0.015, pole_top[2] / 2],
            pos=[pole_top[0], pole_top[1], pole_top[2] / 2], material="mount_mat",
            contype=0, conaffinity=0,
        )

    def _add_overview_camera(self) -> None:
        """A third-person camera for videos (not part of the observation)."""
        eye = self.base_pos + np.array([1.45, -0.75, 0.75])  # opposite the kitchen cabinet
        target = self.base_pos + np.array([0.35, 0.05, 0.1])
        camera = self.spec.worldbody.add_camera(name="overview", pos=eye, fovy=45.0)
        camera.alt.type = mujoco.mjtOrientation.mjORIENTATION_XYAXES
        camera.alt.xyaxes = look_at_xyaxes(eye, target)

    def _add_dressing_geoms(self, body: mujoco.MjsBody, obj: dict, collide: bool) -> None:
        for index, geom in enumerate(obj["geoms"]):
            kwargs = {}
            if geom["texture"] is not None:
                material = f"{body.name}/mat{index}"
                mat = self.spec.add_material(name=material, rgba=[1.0, 1.0, 1.0, 1.0],
                                             texrepeat=_repeat(geom["texture_repeat"]))
                mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = texture_name(geom["texture"])
                kwargs["material"] = material
            size = np.zeros(3)
            size[: len(geom["size"])] = geom["size"]
            body.add_geom(name=visual_geom(body.name, index), type=_GEOM_TYPES[geom["shape"]],
                          size=size, pos=geom["pos"], quat=geom_quat(geom), rgba=geom["rgba"],
                          contype=0, conaffinity=0, mass=0.0, **kwargs)
        if collide:
            low, high = object_bounds(obj)
            body.add_geom(name=f"{body.name}/collision", type=mujoco.mjtGeom.mjGEOM_BOX,
                          size=(high - low) / 2, pos=(high + low) / 2, mass=obj["mass"],
                          group=COLLISION_GROUP, rgba=[0.5, 0.5, 0.5, 0.0], condim=3,
                          friction=PROP_FRICTION, solref=PROP_SOLREF)

    def _add_distractors(self) -> None:
        """Clutter at its nominal poses: visual geoms + one collision box per object.

        ``free`` objects get a free joint (they settle, and the robot can push or pick
        them); the others are static bodies (no table contacts, so no physics cost).
        """
        for obj in self.dressing.distractors:
            x, y = obj["pos"]
            yaw = np.deg2rad(obj["yaw_deg"])
            drop = DROP_HEIGHT if obj["free"] else 0.0
            body = self.spec.worldbody.add_body(
                name=distractor_body(obj["name"]),
                pos=self.base_pos + [x, y, rest_height(obj) + drop],
                quat=[np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
            if obj["free"]:
                body.add_freejoint(name=f"{body.name}/free")
            self._add_dressing_geoms(body, obj, collide=True)

    def _add_background(self) -> None:
        """Static scenery on the floor (visual only: it is out of the robot's reach)."""
        for obj in self.dressing.background:
            x, y = obj["pos"]
            yaw = np.deg2rad(obj["yaw_deg"])
            body = self.spec.worldbody.add_body(
                name=background_body(obj["name"]),
                pos=[self.base_pos[0] + x, self.base_pos[1] + y, 0.0],
                quat=[np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
            self._add_dressing_geoms(body, obj, collide=False)

    def add_object(self, obj: ObjectSpec) -> mujoco.MjsBody:
        """Add a free object; its pose is set at reset."""
        return add_object(self.spec, obj)

    def add_bin(self, bin_spec: BinSpec, pos_base: np.ndarray, yaw: float = 0.0) -> None:
        """Add a static bin with its floor centre at ``pos_base`` (robot base frame)."""
        add_bin(self.spec, bin_spec, self.base_pos + np.asarray(pos_base), yaw)

    def compile(self) -> mujoco.MjModel:
        """Compile the spec. Its ``home`` keyframe (from the robot) leaves props at origin."""
        return self.spec.compile()
