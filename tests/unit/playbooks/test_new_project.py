# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpuops.cluster.new_project: the starting layout of a user's repository, and that layout run end to end.

AWX itself cannot be installed here, so where AWX decides, the tests follow its code (ansible/awx): which files of a
project it offers as playbooks (awx/main/utils/ansible.py could_be_playbook and skip_directory, walked as
awx/main/models/projects.py Project.playbooks walks the project) and that a job template's playbook must be one of
them (awx/api/serializers.py JobOptionsSerializer.validate: "Playbook not found for project.").
"""

import configparser
import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "inventories" / "example"
TEMPLATES_FILE = yaml.safe_load((REPO / "playbooks" / "vars" / "awx_job_templates.yml").read_text(encoding="utf-8"))
JOB_TEMPLATES = TEMPLATES_FILE["gpuops_awx_job_templates"]
PLAYBOOK_OPTIONS = TEMPLATES_FILE["gpuops_awx_playbook_options"]["argument_specs"]["main"]["options"]
GALAXY = yaml.safe_load((REPO / "galaxy.yml").read_text(encoding="utf-8"))
EXECUTION_ENVIRONMENT = yaml.safe_load((REPO / "execution-environment.yml").read_text(encoding="utf-8"))
OTHER_FILES = {"collections/requirements.yml", "ansible.cfg", ".gitignore", "README.md"}
# A line that opens a play or imports or includes playbooks, the ansible.builtin. prefix allowed: AWX's test of a
# playbook since ansible/awx#12102 (awx/main/utils/ansible.py valid_playbook_re).
AWX_PLAYBOOK_LINE = re.compile(r"^\s*-?\s*(?:hosts|(?:ansible\.builtin\.)?(?:include|import_playbook)):")
AWX_SKIPPED_FOLDERS = {"roles", "tasks", "group_vars", "host_vars"}


def new_project(run_playbook, folder, *extra, collections=None, cwd=None):
    """ansible-playbook gpuops.cluster.new_project -e gpuops_project_dir=FOLDER EXTRA..., as a user runs it."""
    env = {"ANSIBLE_COLLECTIONS_PATH": str(collections)} if collections else None
    args = [f"gpuops_project_dir={folder}"] if folder is not None else []
    return run_playbook(
        "gpuops.cluster.new_project",
        "localhost,",
        *(arg for value in args for arg in ("-e", value)),
        *extra,
        env=env,
        cwd=cwd or REPO,
    )


def recap_changed(result):
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    return int(re.search(r"localhost\s+: ok=\d+\s+changed=(\d+)", result.stdout).group(1))


def example_files():
    """{path in the generated repository: the example's file}, hidden entries (a plan left there) aside."""
    return {
        f"inventory/{path.relative_to(EXAMPLE).as_posix()}": path
        for path in EXAMPLE.rglob("*")
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(EXAMPLE).parts)
    }


def tree(folder):
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in folder.rglob("*")
        if path.is_file() and ".gpuops-plan" not in path.parts
    }


def awx_playbooks(project):
    """The playbooks AWX offers for PROJECT (Project.playbooks): .yml and .yaml files outside roles, tasks, group_vars,
    host_vars and dot folders, with a line AWX_PLAYBOOK_LINE matches or vault-encrypted."""
    found = set()
    for folder, _folders, files in os.walk(project):
        parts = pathlib.Path(folder).relative_to(project).parts
        if AWX_SKIPPED_FOLDERS & set(parts) or any(part.startswith(".") for part in parts):
            continue
        for name in files:
            path = pathlib.Path(folder, name)
            if path.suffix not in (".yml", ".yaml"):
                continue
            lines = path.read_text(encoding="utf-8", errors="ignore").splitlines()
            if any(AWX_PLAYBOOK_LINE.match(line) for line in lines) or lines[:1] == ["$ANSIBLE_VAULT;"]:
                found.add(path.relative_to(project).as_posix())
    return found


def required_options(template):
    """The playbook's own variables the template's survey asks and a run must give."""
    asked = [name for source in template["survey"] if source["from"] == "playbook" for name in source["options"]]
    return [name for name in asked if PLAYBOOK_OPTIONS[name].get("required")]


@pytest.fixture(scope="module")
def project(run_playbook, tmp_path_factory):
    """A repository written by a first run into a missing folder."""
    folder = tmp_path_factory.mktemp("new_project") / "gpu-cluster"
    first = new_project(run_playbook, folder)
    assert recap_changed(first) > 0
    return folder


def test_the_first_run_writes_the_example_inventory_the_playbooks_and_the_settings(project):
    expected = {*example_files(), *(template["playbook"] for template in JOB_TEMPLATES), *OTHER_FILES}
    assert set(tree(project)) == expected
    for path, source in example_files().items():
        assert (project / path).read_bytes() == source.read_bytes(), path
    assert {oct((project / path).stat().st_mode & 0o777) for path in expected} == {"0o644"}


@pytest.mark.parametrize("template", JOB_TEMPLATES, ids=lambda template: template["name"])
def test_each_playbook_imports_the_collections_and_says_how_to_run_it(project, template):
    path = project / template["playbook"]
    name = pathlib.PurePosixPath(template["playbook"]).stem
    text = path.read_text(encoding="utf-8")
    assert yaml.safe_load(text) == [
        {"name": f"Run gpuops.cluster.{name}", "ansible.builtin.import_playbook": f"gpuops.cluster.{name}"}
    ]
    command = " ".join(
        [f"#   ansible-playbook {template['playbook']}", *(f"-e {option}=..." for option in required_options(template))]
    )
    assert f"{command} [--check --diff]\n" in text
    assert f'AWX runs it as the job template "{template["name"]}"' in text


def test_the_day_2_playbooks_ask_for_their_node(project):
    day_2 = [template for template in JOB_TEMPLATES if required_options(template) == ["gpuops_node"]]
    assert len(day_2) == 4
    for template in day_2:
        assert "-e gpuops_node=..." in (project / template["playbook"]).read_text(encoding="utf-8")


def test_awx_offers_every_job_template_playbook(project):
    """A job template whose playbook AWX does not list for its project is refused (JobOptionsSerializer.validate)."""
    offered = awx_playbooks(project)
    assert {template["playbook"] for template in JOB_TEMPLATES} <= offered, sorted(offered)


def test_every_job_template_names_a_playbook_of_the_repository_once():
    playbooks = [template["playbook"] for template in JOB_TEMPLATES]
    assert len(set(playbooks)) == len(playbooks)
    assert all(re.fullmatch(r"playbooks/[a-z][a-z0-9_]*\.yml", playbook) for playbook in playbooks), playbooks


# The imported playbooks use kubernetes.core, which `make unit` has (the ansible package bundles it) and ansible-test
# units, installing only ansible-core, has not.
@pytest.mark.skipif(
    importlib.util.find_spec("ansible_collections.kubernetes") is None,
    reason="kubernetes.core is not installed, and the imported playbooks need it",
)
def test_the_imported_playbooks_are_the_collections(project, run_playbook, tmp_path):
    """ansible-playbook resolves each import through the collection: one syntax check of them all, from the
    repository, for the playbooks this checkout has (the job template list decides which it should have)."""
    present = [
        t["playbook"]
        for t in JOB_TEMPLATES
        if (REPO / "playbooks" / pathlib.PurePosixPath(t["playbook"]).name).exists()
    ]
    missing = [t["playbook"] for t in JOB_TEMPLATES if t["playbook"] not in present]
    every = tmp_path / "every.yml"
    every.write_text(yaml.safe_dump([{"ansible.builtin.import_playbook": str(project / path)} for path in present]))
    result = run_playbook(str(every), "inventory", "--syntax-check", cwd=project)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    if missing:
        pytest.skip(f"gpuops.cluster has no {', '.join(missing)} in this checkout yet: their imports are unchecked")


def test_requirements_pin_this_collection_and_the_execution_environments(project):
    requirements = yaml.safe_load((project / "collections" / "requirements.yml").read_text(encoding="utf-8"))
    from_ee = [
        {"name": entry["name"], "version": entry["version"]}
        for entry in EXECUTION_ENVIRONMENT["dependencies"]["galaxy"]["collections"]
        if entry.get("type") is None
    ]
    assert requirements["collections"] == [{"name": "gpuops.cluster", "version": GALAXY["version"]}, *from_ee]
    assert {
        "name": "kubernetes.core",
        "version": next(e["version"] for e in from_ee if e["name"] == "kubernetes.core"),
    } in (requirements["collections"])


def test_ansible_cfg_names_the_inventory_pipelines_and_polls_at_10_ms(project):
    config = configparser.ConfigParser()
    config.read(project / "ansible.cfg")
    assert config.get("defaults", "inventory") == "inventory"
    assert config.getfloat("defaults", "internal_poll_interval") == 0.01
    assert config.getboolean("ssh_connection", "pipelining") is True


def test_the_generated_plan_playbook_plans_the_example_inventory(project, run_playbook):
    """`ansible-playbook playbooks/plan.yml -i inventory` in the repository: the layout works end to end."""
    result = run_playbook(str(project / "playbooks" / "plan.yml"), "inventory", cwd=project)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    hosts = yaml.safe_load((EXAMPLE / "hosts.yml").read_text(encoding="utf-8"))
    gpu_groups = hosts["all"]["children"]["gpu_nodes"]["children"].values()
    gpu_hosts = sorted(host for group in gpu_groups for host in group["hosts"])
    assert f"GPU cluster plan: {len(gpu_hosts)} GPU nodes" in result.stdout
    for host in gpu_hosts:
        assert re.search(rf"^{re.escape(host)}\s+NVIDIA", result.stdout, re.MULTILINE), host
    assert f"Plan files: {project}/inventory/.gpuops-plan" in result.stdout


def names_written_beside_the_inventory():
    """Every name the collection's code puts next to the inventory (beside_inventory, the plan's default folder)."""
    names = set()
    for path in [*REPO.glob("roles/*/*/*.yml"), *REPO.glob("plugins/**/*.py")]:
        text = path.read_text(encoding="utf-8")
        names |= set(re.findall(r"beside_inventory\('([^']+)'\)", text))
        names |= set(re.findall(r'^DEFAULT_DEST_NAME = "([^"]+)"', text, re.MULTILINE))
    return names


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed: .gitignore cannot be checked with it")
def test_git_ignores_what_the_collection_writes_beside_the_inventory(project, run_playbook, tmp_path):
    # The kubeconfig is a file (roles/rke2), the plan and the validation reports are folders.
    written = {".gpuops-kubeconfig": "file", ".gpuops-plan": "folder", ".gpuops-validation": "folder"}
    assert names_written_beside_the_inventory() == set(written)
    clone = tmp_path / "clone"
    shutil.copytree(project, clone, ignore=shutil.ignore_patterns(".gpuops-plan"))
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    planned = run_playbook(str(clone / "playbooks" / "plan.yml"), "inventory", cwd=clone)
    assert planned.returncode == 0, planned.stdout[-3000:]
    (clone / "inventory" / ".gpuops-kubeconfig").write_text("apiVersion: v1\n")
    (clone / "inventory" / ".gpuops-validation").mkdir()
    (clone / "inventory" / ".gpuops-validation" / "validation.json").write_text("{}\n")
    status = subprocess.run(
        ["git", "-C", str(clone), "status", "--porcelain", "--untracked-files=all"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert (clone / "inventory" / ".gpuops-plan" / "capacity.json").exists()
    assert ".gpuops-" not in status, status
    assert "inventory/hosts.yml" in status


def test_a_second_run_changes_nothing(project, run_playbook):
    before = tree(project)
    second = new_project(run_playbook, project)
    assert recap_changed(second) == 0
    assert "Left as they are" not in second.stdout
    assert tree(project) == before


def test_files_already_there_are_left_as_they_are_and_named(project, run_playbook, tmp_path):
    clone = tmp_path / "gpu-cluster"
    shutil.copytree(project, clone)
    edited = (clone / "ansible.cfg").read_text(encoding="utf-8") + "forks = 50\n"
    (clone / "ansible.cfg").write_text(edited, encoding="utf-8")
    (clone / "playbooks" / "site.yml").unlink()
    third = new_project(run_playbook, f"{clone}/")
    assert recap_changed(third) == 1
    assert (clone / "ansible.cfg").read_text(encoding="utf-8") == edited
    assert (clone / "playbooks" / "site.yml").read_bytes() == (project / "playbooks" / "site.yml").read_bytes()
    assert f"Left as they are in {clone}: ansible.cfg. They differ" in " ".join(third.stdout.split())


def test_check_mode_from_the_installed_collection_shows_the_files_and_writes_nothing(run_playbook, tmp_path):
    """The tarball users install: its playbook finds the example, galaxy.yml's data (as MANIFEST.json) and the
    execution environment's versions beside itself, not in a checkout."""
    beside = pathlib.Path(sys.executable).parent / "ansible-galaxy"
    galaxy = str(beside) if beside.exists() else shutil.which("ansible-galaxy")
    built = subprocess.run(
        [galaxy, "collection", "build", "--output-path", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (tarball,) = tmp_path.glob("gpuops-cluster-*.tar.gz")
    installed = subprocess.run(
        # --force: where the collections path already holds gpuops.cluster (ansible-test's copy), it would do nothing.
        [galaxy, "collection", "install", "--force", "--no-deps", "-p", str(tmp_path / "collections"), str(tarball)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    folder = tmp_path / "gpu-cluster"
    result = new_project(run_playbook, folder, "--check", "--diff", collections=tmp_path / "collections", cwd=tmp_path)
    assert recap_changed(result) > 0
    assert not folder.exists()
    # Only the installed copy is on the collections path, and it has MANIFEST.json where a checkout has galaxy.yml.
    assert not (tmp_path / "collections" / "ansible_collections" / "gpuops" / "cluster" / "galaxy.yml").exists()
    for path in (*example_files(), *(template["playbook"] for template in JOB_TEMPLATES), *OTHER_FILES):
        assert f"+++ after: {folder}/{path}\n" in result.stdout, path
    assert f'+  - name: gpuops.cluster\n+    version: "{GALAXY["version"]}"\n' in result.stdout


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param(None, "localhost: gpuops_project_dir is not set.", id="unset"),
        pytest.param("", "localhost: gpuops_project_dir is not set.", id="empty"),
        pytest.param(
            "gpu-cluster", 'localhost: gpuops_project_dir is "gpu-cluster", not an absolute path.', id="relative"
        ),
        pytest.param(
            "FILE",
            "notes.txt is not a folder, or lies under a file; give another folder, or move it away.",
            id="a-file",
        ),
    ],
)
def test_a_bad_project_dir_fails_before_anything_is_written(run_playbook, tmp_path, value, message):
    if value == "FILE":
        value = tmp_path / "notes.txt"
        value.write_text("mine\n")
    result = new_project(run_playbook, value, cwd=tmp_path)
    assert result.returncode != 0
    assert message in result.stdout, result.stdout[-3000:]
    assert sorted(path.name for path in tmp_path.iterdir()) == (
        ["notes.txt"] if value and value != "gpu-cluster" else []
    )
