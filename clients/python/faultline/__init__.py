"""faultline's Python package: the control API client (faultline.control), a `faultline serve` /
`faultline proxy` process with its journal's rounds (faultline.server), and a pytest plugin that gives
each test its own round and judges it (faultline.pytest_plugin). docs/guides/python.md shows all three."""

from .control import FaultlineControl, FaultlineError, parse_banner
from .server import CheckResult, FaultlineCheckError, FaultlineServer, FaultlineStartError, find_binary

__all__ = ["FaultlineControl", "FaultlineError", "parse_banner", "CheckResult", "FaultlineCheckError",
           "FaultlineServer", "FaultlineStartError", "find_binary"]
