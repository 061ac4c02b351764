"""The Azure Kinect and D405 as LeRobot cameras (``agentic_kinect``, ``agentic_d405``), on
their twins."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from lerobot.cameras import CameraConfig
from lerobot.cameras.utils import make_cameras_from_configs
from lerobot.utils.errors import DeviceNotConnectedError
from lerobot_camera_agentic import (
    AgenticD405Camera,
    AgenticD405CameraConfig,
    AgenticKinectCamera,
    AgenticKinectCameraConfig,
)
from support.lerobot_plugins import HEIGHT, WIDTH

from agentic_env.errors import InvalidConfigError
from agentic_env.real.drivers.base import MissingDriverError


def test_camera_types_are_registered_and_built_by_lerobot() -> None:
    assert CameraConfig.get_choice_class("agentic_kinect") is AgenticKinectCameraConfig
    assert CameraConfig.get_choice_class("agentic_d405") is AgenticD405CameraConfig
    cameras = make_cameras_from_configs({
        "shoulder": AgenticKinectCameraConfig(width=WIDTH, height=HEIGHT),
        "wrist": AgenticD405CameraConfig(width=WIDTH, height=HEIGHT)})
    assert isinstance(cameras["shoulder"], AgenticKinectCamera)
    assert isinstance(cameras["wrist"], AgenticD405Camera)
    assert (cameras["shoulder"].optics.name, cameras["wrist"].optics.name) == ("shoulder", "wrist")


def test_twin_kinect_delivers_rgb_and_millimetre_depth_at_the_configured_size() -> None:
    camera = AgenticKinectCamera(AgenticKinectCameraConfig(width=WIDTH, height=HEIGHT,
                                                           use_depth=True, twin=True))
    camera.connect()
    try:
        rgb = camera.async_read(timeout_ms=1000)
        assert rgb.shape == (HEIGHT, WIDTH, 3) and rgb.dtype == np.uint8
        assert rgb.std() > 5.0  # a rendered scene, not a blank frame
        assert camera.read_latest() is rgb
        depth = camera.read_latest_depth()
        assert depth.shape == (HEIGHT, WIDTH, 1) and depth.dtype == np.uint16
        returns = depth[depth > 0]
        assert returns.size > depth.size // 2
        assert returns.min() >= 500 and returns.max() <= 3860  # NFOV range, millimetres
        # 1280x720 cropped to 16:9 and scaled by 1/20: principal point at the image centre
        np.testing.assert_allclose(camera.intrinsics[:2, 2], (WIDTH / 2, HEIGHT / 2), atol=0.5)
    finally:
        camera.disconnect()
    assert not camera.is_connected
    with pytest.raises(DeviceNotConnectedError):
        camera.read()


def test_d405_refuses_depth_unless_asked_and_stale_latest_frames() -> None:
    camera = AgenticD405Camera(AgenticD405CameraConfig(width=WIDTH, height=HEIGHT, twin=True))
    with pytest.raises(DeviceNotConnectedError):
        camera.read_latest()
    camera.connect(warmup=False)
    try:
        with pytest.raises(RuntimeError, match="no frame yet"):
            camera.read_latest()
        assert camera.read().shape == (HEIGHT, WIDTH, 3)
        with pytest.raises(TimeoutError, match="old"):
            camera.read_latest(max_age_ms=-1)
        with pytest.raises(InvalidConfigError, match="use_depth"):
            camera.read_depth()
    finally:
        camera.disconnect()


def test_configuration_errors_name_the_valid_values() -> None:
    with pytest.raises(InvalidConfigError, match="30 fps"):
        AgenticKinectCamera(AgenticKinectCameraConfig(fps=15))
    with pytest.raises(InvalidConfigError, match="16..4096"):
        AgenticD405CameraConfig(width=8)


def test_device_without_its_package_says_what_to_install() -> None:
    if importlib.util.find_spec("pyk4a") is not None:
        pytest.skip("pyk4a is installed: the device would be opened")
    camera = AgenticKinectCamera(AgenticKinectCameraConfig())
    with pytest.raises(MissingDriverError, match="pyk4a"):
        camera.connect()
    assert not camera.is_connected
    assert AgenticKinectCamera.find_cameras() == []
