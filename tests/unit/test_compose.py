"""docker-compose.yml is safe by default: loopback port, password from the environment, pinned
image, shared memory for pgvector's parallel HNSW builds, memory settings from the environment,
a healthcheck."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from ..conftest import REPO

# ${NAME:-default}, ${NAME-default}, ${NAME:?message}, ${NAME?message}, ${NAME}
_VAR = re.compile(r"\$\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")
_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 2**10, "m": 2**20, "mb": 2**20, "g": 2**30, "gb": 2**30}


@pytest.fixture(scope="module")
def postgres() -> dict[str, Any]:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text(encoding="utf-8"))
    service: dict[str, Any] = compose["services"]["postgres"]
    return service


def with_defaults(value: str) -> str:
    """``value`` as compose interpolates it with an empty environment (``:?`` variables fail)."""

    def sub(m: re.Match[str]) -> str:
        if m["op"] in (":-", "-"):
            return m["arg"]
        raise AssertionError(f"{m['name']} has no default")

    return _VAR.sub(sub, value)


def size_bytes(text: str) -> int:
    """A compose size (``1536m``, ``1gb``) or a PostgreSQL memory setting (``1GB``, ``512MB``)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    assert m, text
    return int(float(m[1]) * _UNITS[m[2].lower()])


def settings(service: dict[str, Any]) -> dict[str, str]:
    """The ``-c name=value`` server settings of the service's command."""
    cmd = service["command"]
    assert cmd[0] == "postgres"
    pairs = [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "-c"]
    return dict(p.split("=", 1) for p in pairs)


def test_helpers_read_compose_syntax() -> None:
    assert with_defaults("${A:-1GB}") == "1GB" and with_defaults("x${B-2}y") == "x2y"
    with pytest.raises(AssertionError, match="no default"):
        with_defaults("${C:?set C}")
    assert size_bytes("1536m") == 1536 * 2**20 and size_bytes("1GB") == 2**30
    assert size_bytes("64MB") < size_bytes("1gb")


def test_port_is_bound_to_loopback_only(postgres: dict[str, Any]) -> None:
    ports = postgres["ports"]
    assert ports, "the service publishes no port"
    for spec in ports:
        host = with_defaults(str(spec))
        assert host.startswith("127.0.0.1:") and host.endswith(":5432"), spec


def test_password_comes_from_the_environment_and_is_required(postgres: dict[str, Any]) -> None:
    env = postgres["environment"]
    password = str(env["POSTGRES_PASSWORD"])
    m = _VAR.fullmatch(password)
    assert m and m["name"] == "MEMFLOW_PG_PASSWORD" and m["op"] == ":?", password
    assert "MEMFLOW_PG_PASSWORD" in m["arg"], "the error must name the variable to set"
    assert "POSTGRES_HOST_AUTH_METHOD" not in env  # no trust authentication


def test_image_tag_is_pinned_to_a_pgvector_release(postgres: dict[str, Any]) -> None:
    m = re.fullmatch(r"pgvector/pgvector:(\d+)\.(\d+)\.(\d+)-pg(\d+)", postgres["image"])
    assert m, f"{postgres['image']} is not pinned to pgvector/pgvector:X.Y.Z-pgNN"
    major, minor, _, pg = map(int, m.groups())
    assert (major, minor) >= (0, 8) and pg >= 17


def test_shared_memory_holds_maintenance_work_mem(postgres: dict[str, Any]) -> None:
    conf = settings(postgres)
    shm = size_bytes(with_defaults(str(postgres["shm_size"])))
    mwm = size_bytes(with_defaults(conf["maintenance_work_mem"]))
    assert shm >= mwm > 64 * 2**20, (shm, mwm)


def test_memory_settings_are_overridable_with_modest_defaults(postgres: dict[str, Any]) -> None:
    conf = settings(postgres)
    for name in ("shared_buffers", "maintenance_work_mem", "effective_cache_size", "work_mem"):
        m = _VAR.fullmatch(conf[name])
        assert m and m["op"] == ":-", f"{name}={conf[name]} is not taken from the environment"
        assert m["name"] == f"MEMFLOW_PG_{name.upper()}"
    assert size_bytes(with_defaults(conf["shared_buffers"])) <= 2**30
    assert _VAR.fullmatch(str(postgres["shm_size"])), "shm_size must be overridable too"


def test_healthcheck_waits_for_the_database(postgres: dict[str, Any]) -> None:
    check = postgres["healthcheck"]
    test = " ".join(check["test"]) if isinstance(check["test"], list) else check["test"]
    assert "pg_isready" in test and "-d memflow" in test
    assert check["retries"] >= 1


def test_memflow_service_serves_the_http_api_safely() -> None:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text(encoding="utf-8"))
    service: dict[str, Any] = compose["services"]["memflow"]
    assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert all(p.startswith("127.0.0.1:") for p in service["ports"])
    env = service["environment"]
    # No password or key in the file: the password is required from the environment; the keys
    # are checked by memflow serve itself (it refuses 0.0.0.0 without them).
    assert "${MEMFLOW_PG_PASSWORD:?" in env["MEMFLOW_DATABASE_URL"]
    assert env["MEMFLOW_API_KEYS"] == "${MEMFLOW_API_KEYS:-}"
    assert "/healthz" in " ".join(service["healthcheck"]["test"])


def _required(node: Any) -> set[str]:
    """The variables ``node`` requires with ``${NAME:?...}`` / ``${NAME?...}``."""
    if isinstance(node, dict):
        return set().union(*(_required(v) for v in node.values())) if node else set()
    if isinstance(node, list):
        return set().union(*(_required(v) for v in node)) if node else set()
    return {m["name"] for m in _VAR.finditer(str(node)) if m["op"] in (":?", "?")}


def test_plain_up_needs_only_what_postgres_needs() -> None:
    """Compose resolves ${...:?} in every service, started or not (issue 25): a variable only the
    server profile uses must not be required, or `docker compose up` of PostgreSQL fails."""
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text(encoding="utf-8"))
    services: dict[str, Any] = compose["services"]
    always = {n for n, s in services.items() if not s.get("profiles")}
    assert always == {"postgres"} and services["memflow"]["profiles"] == ["server"]
    needed = set().union(*(_required(services[n]) for n in always))
    assert _required(compose) == needed == {"MEMFLOW_PG_PASSWORD"}


def test_the_memflow_image_is_built_once_not_installed_at_each_start() -> None:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text(encoding="utf-8"))
    service: dict[str, Any] = compose["services"]["memflow"]
    assert service["build"] == "." and ":" in service["image"]
    assert not service["image"].endswith(":latest")
    assert "command" not in service and "volumes" not in service  # the image's own CMD, no venv
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    runs = [line for line in dockerfile.splitlines() if line.startswith("RUN ")]
    assert any("pip install" in r and "[server]" in r for r in runs)
    cmd = next(line for line in dockerfile.splitlines() if line.startswith("CMD "))
    assert "pip" not in cmd and "memflow db upgrade" in cmd and "memflow serve" in cmd
    assert re.search(r"^FROM python:\d+\.\d+\.\d+-slim", dockerfile, re.M)
    assert "USER memflow" in dockerfile  # not root
    # Every path the Dockerfile copies is in the build context .dockerignore leaves.
    kept = {
        line[1:].rstrip("/")
        for line in (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.startswith("!")
    }
    copied = {
        part.rstrip("/")
        for line in dockerfile.splitlines()
        if line.startswith("COPY ") and "--from" not in line
        for part in line.split()[1:-1]
    }
    assert copied <= kept and all((REPO / c).exists() for c in copied)
