#!/usr/bin/env python3
"""Extract Step Functions executions recorded on real AWS into conformance fixtures.

Source: the Step Functions snapshot tests of the LocalStack project (Apache-2.0). Each
`*.snapshot.json` under `tests/aws/services/stepfunctions/v2/` holds API responses recorded
against real AWS (execution histories among them), each `*.validation.json` the date each test
was last validated against AWS. The state machine definitions and inputs are not in the
snapshots: the Python test code loads JSON5 templates and often edits them before creating
the machine. Rather than guess those edits, this script *runs* the test functions offline,
under pytest, with every AWS client, fixture and helper replaced by an in-process fake that
records what the test sends (CreateStateMachine definitions, StartExecution inputs) and which
snapshot key each execution's recorded history is matched under. Nothing reaches the
network; nothing of LocalStack is copied: its test files are imported from a checkout given
on the command line.

Each recorded execution becomes one fixture record with the definition, the input, AWS's
recorded result (status, output or error and cause, states entered in order) and, per Task
state visit, the results AWS recorded for each attempt, so a replay can feed Task states
exactly what AWS returned. Every record is classified in or out of scope; out-of-scope
records are written too, with their reason.

Usage:
    pip install pytest json5
    git clone https://github.com/localstack/localstack   # or any checkout of it
    python3 scripts/extract-aws-recordings.py --localstack ../localstack \
        --commit <sha of that checkout> --out mapping-tests/asl-interp/fixtures/aws-recorded

Snapshot transformers: LocalStack replaces volatile values in its recordings (ARNs, request
ids, timestamps, uuids) with placeholders such as `<ExecArnPart_0idx>`, `<uuid:1>`,
`timestamp`. This script replays the same replacements on the definition and on the
execution context it records (the fakes register the transformers the test asks for, and
the default ones LocalStack's snapshot fixture adds), so names that flow from the context
into an output compare literally. Every replacement text registered for an execution is
listed in its `placeholders` field: a runner treats a recorded string equal to one of them
(or containing one, or of the form `<name:N>`) as opaque.
"""

from __future__ import annotations

import argparse
import collections
import importlib.abc
import importlib.machinery
import json
import os
import re
import sys
import tempfile
import time
import types

try:
    import pytest

    _tryfirst = pytest.hookimpl(tryfirst=True)
except ImportError:  # reported in main()
    pytest = None

    def _tryfirst(fn):
        return fn

SCHEMA_VERSION = 1
SOURCE_REPO = "localstack/localstack"
TEST_ROOT = "tests/aws/services/stepfunctions/v2"

FAKE_ACCOUNT = "111111111111"
FAKE_REGION = "us-east-1"
PARTITION = "aws"


# ----------------------------------------------------------------------------------------------
# A value that stands for anything the fakes do not model: it is a string (so it serialises),
# callable, subscriptable and iterable (empty), and a decorator when called on a function.


class Stub(str):
    def __new__(cls, label="stub"):
        s = str.__new__(cls, label.rsplit(".", 1)[-1])
        s._label = label
        return s

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Stub(f"{self._label}.{name}")

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and (callable(args[0]) or isinstance(args[0], type)):
            return args[0]
        return Stub(f"{self._label}()")

    def __getitem__(self, key):
        return Stub(f"{self._label}[{key!s}]")

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return True

    def __hash__(self):
        return str.__hash__(self)

    def __eq__(self, other):
        return str.__eq__(self, other)

    def __mro_entries__(self, bases):
        return (object,)

    def __or__(self, other):
        return self

    def __ror__(self, other):
        return self


class StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = Stub(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


# ----------------------------------------------------------------------------------------------
# The recording world: machines, executions, and which recorded snapshot value each execution
# was matched under.


class World:
    def __init__(self):
        self.uid = 0
        self.reset(None, None)

    def reset(self, nodeid, recorded):
        self.nodeid = nodeid
        self.recorded = recorded or {}
        self.machines = {}
        self.executions = {}
        self.exec_order = []
        self.pairs = []
        self.transformers = []
        self.notes = []
        self.marker = None

    def next_uid(self):
        self.uid += 1
        return f"x{self.uid:05d}yz"


WORLD = World()


class Transformer:
    """A snapshot transformer, as far as the extraction needs it."""

    def __init__(self, kind, pattern=None, replacement=None, reference=True):
        self.kind = kind
        self.pattern = pattern
        self.replacement = replacement
        self.reference = reference


def _flatten_transformers(t):
    if isinstance(t, (list, tuple)):
        for x in t:
            yield from _flatten_transformers(x)
    elif isinstance(t, Transformer):
        yield t


def RegexTransformer(regex, replacement):  # noqa: N802 - mirrors the imported name
    pattern = regex.pattern if isinstance(regex, re.Pattern) else str(regex)
    return Transformer("regex", pattern, str(replacement), False)


def JsonpathTransformer(jsonpath, replacement, replace_reference=True):  # noqa: N802
    return Transformer("jsonpath", str(jsonpath), str(replacement), replace_reference)


def KeyValueBasedTransformer(fn, replacement, replace_reference=True):  # noqa: N802
    return Transformer("key_value_fn", None, str(replacement), replace_reference)


def KeyValueBasedTransformerFunctionReplacement(key, fn, replace_reference=True):  # noqa: N802
    return Transformer("key_value_fn", str(key), None, replace_reference)


def GenericTransformer(fn):  # noqa: N802
    return Transformer("generic")


def SortingTransformer(key, sorting_fn=None):  # noqa: N802
    return Transformer("sorting", str(key))


class TransformContext:
    def __init__(self):
        self.replacements = []


class TransformUtility:
    """`snapshot.transform`: the helpers the step functions tests call."""

    @staticmethod
    def sfn_sm_create_arn(resp, index):
        return RegexTransformer(resp["stateMachineArn"].rpartition(":")[-1], f"<ArnPart_{index}idx>")

    @staticmethod
    def sfn_sm_exec_arn(resp, index):
        return RegexTransformer(resp["executionArn"].rpartition(":")[-1], f"<ExecArnPart_{index}idx>")

    @staticmethod
    def sfn_sm_express_exec_arn(resp, index):
        parts = resp["executionArn"].split(":")
        return [
            RegexTransformer(parts[-2], f"<ExpressExecArn_Part1_{index}idx>"),
            RegexTransformer(parts[-1], f"<ExpressExecArn_Part2_{index}idx>"),
        ]

    @staticmethod
    def sfn_sm_sync_exec_arn(resp, index):
        parts = resp["executionArn"].split(":")
        return [
            RegexTransformer(parts[-2], f"<SyncExecArn_Part1_{index}idx>"),
            RegexTransformer(parts[-1], f"<SyncExecArn_Part2_{index}idx>"),
        ]

    @staticmethod
    def sfn_map_run_arn(arn, index):
        return []

    @staticmethod
    def stepfunctions_api():
        return [
            JsonpathTransformer("$..SdkHttpMetadata..Date", "date", False),
            JsonpathTransformer("$..SdkResponseMetadata..RequestId", "RequestId", False),
            JsonpathTransformer("$..X-Amzn-Trace-Id", "X-Amzn-Trace-Id", False),
            JsonpathTransformer("$..x-amz-crc32", "x-amz-crc32", False),
            JsonpathTransformer("$..x-amzn-RequestId", "x-amzn-RequestId", False),
            JsonpathTransformer("$..x-amzn-requestid", "x-amzn-requestid", False),
            KeyValueBasedTransformer(None, "json-input"),
        ]

    @staticmethod
    def regex(regex, replacement):
        return RegexTransformer(regex, replacement)

    @staticmethod
    def jsonpath(jsonpath, value_replacement, reference_replacement=True):
        return JsonpathTransformer(jsonpath, value_replacement, reference_replacement)

    @staticmethod
    def key_value(key, value_replacement=None, reference_replacement=True):
        return Transformer("key_value", str(key), str(value_replacement or key), reference_replacement)

    def __getattr__(self, name):
        def unknown(*args, **kwargs):
            return Transformer("unknown:" + name)

        return unknown


class Snapshot:
    """The `snapshot`/`sfn_snapshot` fixture: registers transformers, pairs `match` calls."""

    transform = TransformUtility()

    def add_transformer(self, transformer, priority=0):
        for t in _flatten_transformers(transformer):
            WORLD.transformers.append((priority, len(WORLD.transformers), t))

    def add_transformers_list(self, transformers):
        self.add_transformer(transformers)

    def match(self, key, obj):
        recorded = WORLD.recorded.get(key)
        if recorded is None:
            WORLD.notes.append(f"match key {key!r} has no recorded value")
            return True
        _pair(key, "", obj, recorded)
        return True

    def match_object(self, key, obj):
        return True

    def skip_key(self, *args, **kwargs):
        return None

    def __getattr__(self, name):
        return Stub("snapshot." + name)


def _pair(key, pointer, obj, recorded):
    """Walks what the test matched in step with what was recorded, pairing fake responses."""
    if isinstance(obj, Tracked):
        WORLD.pairs.append(
            {
                "key": key,
                "pointer": pointer,
                "kind": obj.kind,
                "execution": obj.execution,
                "recorded": recorded,
                "transformers": list(WORLD.transformers),
            }
        )
        return
    if isinstance(obj, dict) and isinstance(recorded, dict):
        for k, v in obj.items():
            if k in recorded:
                _pair(key, f"{pointer}/{k}", v, recorded[k])
    elif isinstance(obj, (list, tuple)) and isinstance(recorded, list):
        for i, (v, r) in enumerate(zip(obj, recorded)):
            _pair(key, f"{pointer}/{i}", v, r)


class Tracked:
    kind = "?"
    execution = None


class HistoryResponse(dict, Tracked):
    kind = "history"

    def __init__(self, execution):
        super().__init__(events=[], ResponseMetadata={"HTTPHeaders": {}, "HTTPStatusCode": 200})
        self.execution = execution


class DescribeResponse(dict, Tracked):
    kind = "describe"

    def __init__(self, execution):
        super().__init__(
            executionArn=execution["arn"],
            stateMachineArn=execution["machine_arn"],
            name=execution["name"],
            status="SUCCEEDED",
            input=execution["input"],
            startDate=Stub("startDate"),
            stopDate=Stub("stopDate"),
            ResponseMetadata={"HTTPHeaders": {}, "HTTPStatusCode": 200},
        )
        self.execution = execution


class SyncResponse(DescribeResponse):
    kind = "sync"


class OutputToken(str, Tracked):
    """What `extract_json` returns for an execution's output: the test stores it, matched."""

    kind = "output"

    def __new__(cls, execution):
        s = str.__new__(cls, "{}")
        s.execution = execution
        return s


# ----------------------------------------------------------------------------------------------
# Fake AWS clients.


def _arn(service, resource):
    return f"arn:{PARTITION}:{service}:{FAKE_REGION}:{FAKE_ACCOUNT}:{resource}"


class FakeStepFunctions:
    def _machine(self, arn):
        base = str(arn).split("#", 1)[0]
        if base in WORLD.machines:
            return WORLD.machines[base]
        # A version (":1") or alias (":alias") qualified ARN.
        head = base.rsplit(":", 1)[0]
        return WORLD.machines.get(head)

    def create_state_machine(self, name=None, definition=None, roleArn=None, **kwargs):  # noqa: N803
        arn = _arn("states", f"stateMachine:{name}")
        WORLD.machines[arn] = {
            "arn": arn,
            "name": name,
            "definition": definition,
            "role": roleArn,
            "type": str(kwargs.get("type") or "STANDARD"),
            "logging": kwargs.get("loggingConfiguration") is not None,
        }
        resp = {"stateMachineArn": arn, "creationDate": Stub("creationDate")}
        if kwargs.get("publish"):
            resp["stateMachineVersionArn"] = arn + ":1"
        return resp

    def update_state_machine(self, stateMachineArn=None, definition=None, **kwargs):  # noqa: N803
        m = self._machine(stateMachineArn)
        if m is not None and definition is not None:
            m["definition"] = definition
        resp = {"updateDate": Stub("updateDate"), "revisionId": Stub("revisionId")}
        if kwargs.get("publish"):
            resp["stateMachineVersionArn"] = str(stateMachineArn) + ":2"
        return resp

    def describe_state_machine(self, stateMachineArn=None, **kwargs):  # noqa: N803
        m = self._machine(stateMachineArn) or {}
        return {
            "stateMachineArn": stateMachineArn,
            "name": m.get("name"),
            "definition": m.get("definition"),
            "roleArn": m.get("role"),
            "type": m.get("type"),
            "status": "ACTIVE",
        }

    def _start(self, kind, stateMachineArn, input=None, name=None, **kwargs):  # noqa: N803,A002
        m = self._machine(stateMachineArn)
        exec_name = name or f"exec{WORLD.next_uid()}"
        machine_name = m["name"] if m else "unknown"
        arn = _arn("states", f"execution:{machine_name}:{exec_name}")
        if kind == "sync" or (m and m["type"] == "EXPRESS"):
            arn = _arn("states", f"express:{machine_name}:{exec_name}:{WORLD.next_uid()}")
        execution = {
            "arn": arn,
            "name": exec_name,
            "machine_arn": m["arn"] if m else str(stateMachineArn),
            "machine_name": machine_name,
            "definition": m["definition"] if m else None,
            "type": m["type"] if m else "UNKNOWN",
            "logging": m["logging"] if m else False,
            "role": m["role"] if m else None,
            "input": input if input is not None else "{}",
            "start": kind,
            "mocked": "#" in str(stateMachineArn),
        }
        WORLD.executions[arn] = execution
        WORLD.exec_order.append(arn)
        return execution

    def start_execution(self, **kwargs):
        e = self._start("async", **kwargs)
        return {"executionArn": e["arn"], "startDate": Stub("startDate")}

    def start_sync_execution(self, **kwargs):
        e = self._start("sync", **kwargs)
        return SyncResponse(e)

    def get_execution_history(self, executionArn=None, **kwargs):  # noqa: N803
        e = WORLD.executions.get(executionArn)
        if e is None:
            return {"events": []}
        return HistoryResponse(e)

    def describe_execution(self, executionArn=None, **kwargs):  # noqa: N803
        e = WORLD.executions.get(executionArn)
        if e is None:
            return Stub("describe_execution")
        return DescribeResponse(e)

    def create_activity(self, name=None, **kwargs):
        return {"activityArn": _arn("states", f"activity:{name}"), "creationDate": Stub("creationDate")}

    def list_executions(self, **kwargs):
        return {"executions": []}

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Stub("stepfunctions." + name)


class FakeAwsClient:
    def __init__(self):
        self.stepfunctions = FakeStepFunctions()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Stub("aws." + name)


# ----------------------------------------------------------------------------------------------
# Our own versions of the test helpers the step functions tests import from LocalStack: they do
# what the originals do to the API (create, start, fetch history, match), nothing else.


def _noop(*args, **kwargs):
    return []


def _sfn_client(target):
    return target.stepfunctions


def h_create_state_machine_with_iam_role(
    target_aws_client,
    create_state_machine_iam_role,
    create_state_machine,
    snapshot,
    definition,
    logging_configuration=None,
    state_machine_name=None,
    state_machine_type="STANDARD",
):
    role = create_state_machine_iam_role(target_aws_client=target_aws_client)
    snapshot.add_transformer(RegexTransformer(role, "snf_role_arn"))
    args = {
        "name": state_machine_name or f"statemachine_create_and_record_execution_{WORLD.next_uid()}",
        "definition": definition,
        "roleArn": role,
        "type": state_machine_type,
    }
    if logging_configuration is not None:
        args["loggingConfiguration"] = logging_configuration
    resp = create_state_machine(target_aws_client, **args)
    snapshot.add_transformer(snapshot.transform.sfn_sm_create_arn(resp, 0))
    return resp["stateMachineArn"]


def h_launch_and_record_execution(
    target_aws_client, sfn_snapshot, state_machine_arn, execution_input, verify_execution_description=False
):
    client = _sfn_client(target_aws_client)
    resp = client.start_execution(stateMachineArn=state_machine_arn, input=execution_input)
    sfn_snapshot.add_transformer(sfn_snapshot.transform.sfn_sm_exec_arn(resp, 0))
    arn = resp["executionArn"]
    if verify_execution_description:
        sfn_snapshot.match("describe_execution", client.describe_execution(executionArn=arn))
    sfn_snapshot.match("get_execution_history", client.get_execution_history(executionArn=arn))
    return arn


def h_launch_and_record_mocked_execution(target_aws_client, sfn_snapshot, state_machine_arn, execution_input, test_name):
    client = _sfn_client(target_aws_client)
    resp = client.start_execution(stateMachineArn=f"{state_machine_arn}#{test_name}", input=execution_input)
    sfn_snapshot.add_transformer(sfn_snapshot.transform.sfn_sm_exec_arn(resp, 0))
    sfn_snapshot.match("get_execution_history", client.get_execution_history(executionArn=resp["executionArn"]))
    return resp["executionArn"]


def h_launch_and_record_mocked_sync_execution(target_aws_client, sfn_snapshot, state_machine_arn, execution_input, test_name):
    client = _sfn_client(target_aws_client)
    resp = client.start_sync_execution(stateMachineArn=f"{state_machine_arn}#{test_name}", input=execution_input)
    sfn_snapshot.add_transformer(sfn_snapshot.transform.sfn_sm_sync_exec_arn(resp, 0))
    sfn_snapshot.match("start_execution_sync_response", resp)
    return resp["executionArn"]


def h_launch_and_record_sync_execution(target_aws_client, sfn_snapshot, state_machine_arn, execution_input):
    client = _sfn_client(target_aws_client)
    resp = client.start_sync_execution(stateMachineArn=state_machine_arn, input=execution_input)
    sfn_snapshot.add_transformer(sfn_snapshot.transform.sfn_sm_sync_exec_arn(resp, 0))
    sfn_snapshot.match("start_execution_sync_response", resp)
    return resp["executionArn"]


def h_create_and_record_execution(
    target_aws_client,
    create_state_machine_iam_role,
    create_state_machine,
    sfn_snapshot,
    definition,
    execution_input,
    verify_execution_description=False,
):
    arn = h_create_state_machine_with_iam_role(
        target_aws_client, create_state_machine_iam_role, create_state_machine, sfn_snapshot, definition
    )
    return h_launch_and_record_execution(
        target_aws_client, sfn_snapshot, arn, execution_input, verify_execution_description
    )


def h_create_and_record_mocked_execution(
    target_aws_client,
    create_state_machine_iam_role,
    create_state_machine,
    sfn_snapshot,
    definition,
    execution_input,
    state_machine_name,
    test_name,
    state_machine_type="STANDARD",
):
    arn = h_create_state_machine_with_iam_role(
        target_aws_client,
        create_state_machine_iam_role,
        create_state_machine,
        sfn_snapshot,
        definition,
        state_machine_name=state_machine_name,
        state_machine_type=state_machine_type,
    )
    return h_launch_and_record_mocked_execution(target_aws_client, sfn_snapshot, arn, execution_input, test_name)


def h_create_and_record_mocked_sync_execution(
    target_aws_client,
    create_state_machine_iam_role,
    create_state_machine,
    sfn_snapshot,
    definition,
    execution_input,
    state_machine_name,
    test_name,
):
    arn = h_create_state_machine_with_iam_role(
        target_aws_client,
        create_state_machine_iam_role,
        create_state_machine,
        sfn_snapshot,
        definition,
        state_machine_name=state_machine_name,
        state_machine_type="EXPRESS",
    )
    return h_launch_and_record_mocked_sync_execution(target_aws_client, sfn_snapshot, arn, execution_input, test_name)


def h_create_and_record_express_sync_execution(
    target_aws_client, create_state_machine_iam_role, create_state_machine, sfn_snapshot, definition, execution_input
):
    arn = h_create_state_machine_with_iam_role(
        target_aws_client,
        create_state_machine_iam_role,
        create_state_machine,
        sfn_snapshot,
        definition,
        state_machine_type="EXPRESS",
    )
    client = _sfn_client(target_aws_client)
    resp = client.start_sync_execution(stateMachineArn=arn, input=execution_input)
    sfn_snapshot.add_transformer(sfn_snapshot.transform.sfn_sm_sync_exec_arn(resp, 0))
    sfn_snapshot.match("start_execution_sync_response", resp)
    return resp["executionArn"]


def h_create_and_record_logs(
    target_aws_client,
    create_state_machine_iam_role,
    create_state_machine,
    sfn_create_log_group,
    sfn_snapshot,
    definition,
    execution_input,
    log_level,
    include_execution_data,
):
    log_group = sfn_create_log_group()
    logging_configuration = {
        "level": log_level,
        "includeExecutionData": include_execution_data,
        "destinations": [{"cloudWatchLogsLogGroup": {"logGroupArn": str(log_group)}}],
    }
    arn = h_create_state_machine_with_iam_role(
        target_aws_client,
        create_state_machine_iam_role,
        create_state_machine,
        sfn_snapshot,
        definition,
        logging_configuration,
    )
    return h_launch_and_record_execution(target_aws_client, sfn_snapshot, arn, execution_input)


def h_launch_and_record_logs(
    target_aws_client, state_machine_arn, execution_input, log_level, log_group_name, sfn_snapshot
):
    return h_launch_and_record_execution(target_aws_client, sfn_snapshot, state_machine_arn, execution_input)


def h_create_and_record_events(*args, **kwargs):
    WORLD.notes.append("create_and_record_events: EventBridge-recorded test, not replayed")
    raise _Unsupported("create_and_record_events")


class _Unsupported(Exception):
    pass


def h_create_and_run_mock(*args, **kwargs):
    raise _Unsupported("create_and_run_mock")


HELPERS = {
    "create_state_machine_with_iam_role": h_create_state_machine_with_iam_role,
    "launch_and_record_execution": h_launch_and_record_execution,
    "launch_and_record_mocked_execution": h_launch_and_record_mocked_execution,
    "launch_and_record_mocked_sync_execution": h_launch_and_record_mocked_sync_execution,
    "launch_and_record_sync_execution": h_launch_and_record_sync_execution,
    "create_and_record_execution": h_create_and_record_execution,
    "create_and_record_mocked_execution": h_create_and_record_mocked_execution,
    "create_and_record_mocked_sync_execution": h_create_and_record_mocked_sync_execution,
    "create_and_record_express_sync_execution": h_create_and_record_express_sync_execution,
    "create_and_record_logs": h_create_and_record_logs,
    "launch_and_record_logs": h_launch_and_record_logs,
    "create_and_record_events": h_create_and_record_events,
    "create_and_run_mock": h_create_and_run_mock,
}


class NoSuchJsonPathError(Exception):
    pass


def extract_json(path, doc):
    """The few JSONPath reads the tests make on a history, answered with trackable tokens."""
    if isinstance(doc, HistoryResponse) and re.search(r"executionSucceededEventDetails\.+output$", path):
        return OutputToken(doc.execution)
    if isinstance(doc, HistoryResponse) and "mapRunArn" in path:
        return _arn("states", f"mapRun:{doc.execution['machine_name']}/{WORLD.next_uid()}:{WORLD.next_uid()}")
    if isinstance(doc, HistoryResponse):
        raise NoSuchJsonPathError(path)
    return Stub("extract_json")


# ----------------------------------------------------------------------------------------------
# Import stubs: every LocalStack runtime module the tests import (and a few third-party ones)
# is replaced by a module that answers with Stubs, except the handful given real behaviour.


class Markers:
    """`markers.aws.validated` and friends: tags the test with the marker's name."""

    class _Aws:
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)

            def deco(fn=None, *args, **kwargs):
                def tag(f):
                    try:
                        f._aws_marker = name
                    except AttributeError:
                        pass
                    return f

                if fn is not None and callable(fn) and not args and not kwargs:
                    return tag(fn)
                return tag

            return deco

    aws = _Aws()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Stub("markers." + name)


def _module_overrides():
    counter = {"n": 0}

    def short_uid():
        return WORLD.next_uid()

    def long_uid():
        counter["n"] += 1
        return f"00000000-0000-4000-8000-{counter['n']:012d}"

    def to_str(v, *a, **k):
        return v.decode("utf-8") if isinstance(v, bytes) else str(v)

    def to_bytes(v, *a, **k):
        return v.encode("utf-8") if isinstance(v, str) else bytes(v)

    def poll_condition(condition, *args, **kwargs):
        return True

    def retry(fn, *args, **kwargs):
        return fn()

    def wait_until(*args, **kwargs):
        return True

    helpers = dict(HELPERS)
    for name in (
        "await_execution_success",
        "await_execution_terminated",
        "await_execution_started",
        "await_execution_aborted",
        "await_execution_lists_terminated",
        "await_list_execution_status",
        "await_on_execution_events",
        "await_state_machine_listed",
        "await_state_machine_not_listed",
        "await_state_machine_version_listed",
        "await_state_machine_version_not_listed",
        "await_state_machine_alias_is_created",
        "await_state_machine_alias_is_deleted",
        "await_no_state_machines_listed",
        "await_on_execution_logs",
    ):
        helpers[name] = _noop
    helpers["SfnNoneRecursiveParallelTransformer"] = lambda *a, **k: Transformer("generic")

    return {
        "localstack.utils.strings": {
            "short_uid": short_uid,
            "long_uid": long_uid,
            "to_str": to_str,
            "to_bytes": to_bytes,
        },
        "localstack.utils.sync": {"poll_condition": poll_condition, "retry": retry, "wait_until": wait_until},
        "localstack.testing.aws.util": {"is_aws_cloud": lambda: True},
        "localstack.testing.pytest": {"markers": Markers()},
        "localstack.testing.pytest.stepfunctions.utils": helpers,
        "localstack.services.stepfunctions.asl.utils.json_path": {
            "extract_json": extract_json,
            "NoSuchJsonPathError": NoSuchJsonPathError,
        },
        "localstack_snapshot.snapshots.transformer": {
            "RegexTransformer": RegexTransformer,
            "JsonpathTransformer": JsonpathTransformer,
            "KeyValueBasedTransformer": KeyValueBasedTransformer,
            "KeyValueBasedTransformerFunctionReplacement": KeyValueBasedTransformerFunctionReplacement,
            "GenericTransformer": GenericTransformer,
            "SortingTransformer": SortingTransformer,
            "TransformContext": TransformContext,
        },
        "tests.aws.services.apigateway.apigateway_fixtures": {
            "create_rest_resource": lambda *a, **k: (Stub("resource_id"), Stub("resource")),
        },
        "localstack.testing.config": {
            "TEST_AWS_ACCOUNT_ID": FAKE_ACCOUNT,
            "TEST_AWS_REGION_NAME": FAKE_REGION,
            "SECONDARY_TEST_AWS_ACCOUNT_ID": "222222222222",
            "SECONDARY_TEST_AWS_REGION_NAME": "us-west-2",
        },
    }


STUB_PREFIXES = (
    "localstack",
    "localstack_snapshot",
    "botocore",
    "boto3",
    "aws_cdk",
    "constructs",
    "rolo",
    "jsonpath_ng",
    "yaml",
    "tests.aws.services.lambda_",
    "tests.aws.services.apigateway",
    "tests.aws.test_notifications",
)


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self):
        self.overrides = _module_overrides()

    def _stubbed(self, name):
        return any(name == p or name.startswith(p + ".") for p in STUB_PREFIXES)

    def find_spec(self, fullname, path, target=None):
        if self._stubbed(fullname):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        m = StubModule(spec.name)
        m.__path__ = []
        for k, v in self.overrides.get(spec.name, {}).items():
            setattr(m, k, v)
        return m

    def exec_module(self, module):
        return None


# ----------------------------------------------------------------------------------------------
# The pytest plugin: fixtures, and a hook that runs each test in a fresh recording world.


FIXTURE_VALUES = {
    "account_id": FAKE_ACCOUNT,
    "region_name": FAKE_REGION,
    "secondary_account_id": "222222222222",
    "secondary_region_name": "us-west-2",
}


def _make_fixtures(names):
    import pytest

    ns = {}

    def make(name):
        if name in ("aws_client", "aws_client_no_sync_prefix", "aws_client_no_retry", "secondary_aws_client"):

            def f():
                return FakeAwsClient()

        elif name == "aws_client_factory":

            def f():
                return lambda *a, **k: FakeAwsClient()

        elif name in ("snapshot", "sfn_snapshot", "sfn_ecs_snapshot", "sfn_batch_snapshot"):

            def f():
                s = Snapshot()
                # The defaults LocalStack's snapshot fixture and sfn_snapshot register.
                s.add_transformer(RegexTransformer(FAKE_ACCOUNT, "1" * 12), priority=2)
                s.add_transformer(RegexTransformer(FAKE_REGION, "<region>"), priority=2)
                s.add_transformer(RegexTransformer(f"arn:{PARTITION}:", "arn:<partition>:"), priority=2)
                # LocalStack's basic transformer for step functions snapshots: uuids under keys
                # ending in "id", ISO-8601 text, datetimes, and values under keys naming a
                # timestamp.
                s.add_transformer(KeyValueBasedTransformer(None, "uuid"), priority=2)
                s.add_transformer(RegexTransformer(r"\d{4}-\d{2}-\d{2}T[0-9:.]+", "date"), priority=2)
                s.add_transformer(KeyValueBasedTransformer(None, "datetime", False), priority=2)
                s.add_transformer(KeyValueBasedTransformer(None, "timestamp", False), priority=2)
                s.add_transformer(TransformUtility.stepfunctions_api())
                return s

        elif name == "create_state_machine":

            def f():
                return lambda target_aws_client=None, **kwargs: (
                    target_aws_client or FakeAwsClient()
                ).stepfunctions.create_state_machine(**kwargs)

        elif name == "create_state_machine_iam_role":

            def f():
                def create(target_aws_client=None, *a, **k):
                    return _arn("iam", f"role/test-sfn-role-{WORLD.next_uid()}").replace(FAKE_REGION, "")

                return create

        elif name == "create_lambda_function":

            def f():
                def create(*args, func_name=None, **kwargs):
                    fname = func_name or f"lambda-{WORLD.next_uid()}"
                    arn = _arn("lambda", f"function:{fname}")
                    return {
                        "CreateFunctionResponse": {"FunctionArn": arn, "FunctionName": fname},
                        "CreateEventSourceMappingResponse": Stub("esm"),
                    }

                return create

        elif name == "sqs_create_queue":

            def f():
                def create(*args, QueueName=None, **kwargs):  # noqa: N803
                    q = QueueName or f"queue-{WORLD.next_uid()}"
                    return f"https://sqs.{FAKE_REGION}.amazonaws.com/{FAKE_ACCOUNT}/{q}"

                return create

        elif name == "create_rest_apigw":

            def f():
                return lambda *a, **k: (Stub("rest_api_id"), Stub("rest_api_name"), Stub("root_id"))

        elif name == "create_role_with_policy":

            def f():
                return lambda *a, **k: (Stub("role_name"), _arn("iam", f"role/r-{WORLD.next_uid()}"))

        elif name == "create_activity":

            def f():
                return lambda *a, name=None, **k: FakeStepFunctions().create_activity(name=name or WORLD.next_uid())

        elif name in FIXTURE_VALUES:
            value = FIXTURE_VALUES[name]

            def f():
                return value

        elif name == "cleanups":

            def f():
                return []

        else:

            def f():
                return Stub("fixture." + name)

        f.__name__ = name
        # Clients and values are stateless (the recording world is global), so they can serve
        # fixtures of any scope the test modules declare; the snapshot is per test.
        scope = "function" if "snapshot" in name else "session"
        return pytest.fixture(name=name, scope=scope)(f)

    for n in names:
        ns["fx_" + n] = make(n)
    return ns


class Plugin:
    error = None

    def __init__(self, recorded_by_node, validation_by_node, on_result):
        self.recorded_by_node = recorded_by_node
        self.validation_by_node = validation_by_node
        self.on_result = on_result

    def pytest_collection_modifyitems(self, session, config, items):
        # Only tests with a recording are run: the rest have nothing to extract.
        items[:] = [i for i in items if i.nodeid in self.recorded_by_node]

    @_tryfirst
    def pytest_runtest_setup(self, item):
        entry = self.recorded_by_node[item.nodeid]
        WORLD.reset(item.nodeid, entry["recorded-content"])
        _freeze_time(_recorded_ms(entry.get("recorded-date")))
        WORLD.marker = getattr(getattr(item, "function", None), "_aws_marker", None)
        self.error = None

    def pytest_runtest_makereport(self, item, call):
        if call.excinfo is not None and self.error is None and call.when in ("setup", "call"):
            e = call.excinfo.value
            if isinstance(e, _Unsupported):
                self.error = f"unsupported helper: {e}"
            else:
                self.error = f"{call.excinfo.typename}: {str(e)[:200]}"

    def pytest_runtest_logfinish(self, nodeid, location):
        if nodeid in self.recorded_by_node and WORLD.nodeid == nodeid:
            self.on_result(nodeid, self.recorded_by_node[nodeid], WORLD, self.error)


def _freeze_time(ms):
    """Tests that put "now + N" into an input read the clock; offline, "now" is the recording
    date, which is also where the replay starts its virtual clock, so the distance survives."""
    import datetime as real

    if ms is None:
        return
    frozen = real.datetime.fromtimestamp(ms / 1000, tz=real.timezone.utc)

    class FrozenDateTime(real.datetime):
        @classmethod
        def now(cls, tz=None):
            return frozen if tz is not None else frozen.replace(tzinfo=None)

        @classmethod
        def utcnow(cls):
            return frozen.replace(tzinfo=None)

    shim = types.ModuleType("datetime")
    shim.__dict__.update({k: getattr(real, k) for k in dir(real) if not k.startswith("__")})
    shim.datetime = FrozenDateTime
    for name, mod in list(sys.modules.items()):
        if not name.startswith("tests.aws.services.stepfunctions") or mod is None:
            continue
        current = getattr(mod, "datetime", None)
        if current is real or getattr(current, "__name__", None) == "datetime" and isinstance(current, types.ModuleType):
            mod.datetime = shim
        elif isinstance(current, type) and issubclass(current, real.datetime):
            mod.datetime = FrozenDateTime


# ----------------------------------------------------------------------------------------------
# Turning a paired recording into a fixture record.


FAKE_ID = re.compile(r"x\d{5}yz")
DEFAULT_PATTERNS = {FAKE_ACCOUNT, FAKE_REGION, f"arn:{PARTITION}:"}


def _apply_transformers(text, transformers):
    """The serialized-text replacements LocalStack applies, in its order (priority, then
    registration), limited to those that rename an identifier the fakes made up (machine,
    execution, function, role names; account, region, partition). A replacement of a data
    value the test chose (a timestamp, say) is not applied: the value itself is kept."""
    for _, _, t in sorted(transformers, key=lambda p: (p[0], p[1])):
        if t.kind == "regex" and t.pattern and (FAKE_ID.search(t.pattern) or t.pattern in DEFAULT_PATTERNS):
            try:
                text = re.sub(t.pattern, t.replacement.replace("\\", "\\\\"), text)
            except re.error:
                pass
    return text


def _placeholders(transformers):
    out = set()
    for _, _, t in transformers:
        if t.replacement is None:
            continue
        if t.kind == "regex":
            out.add(t.replacement)
        elif t.reference:
            out.add(f"<{t.replacement}:N>")
        else:
            out.add(t.replacement)
    return sorted(out)


ANGLE_TOKEN = re.compile(r"<[A-Za-z0-9_.:-]+>")


def _is_placeholder(s, placeholders):
    if s in placeholders or ANGLE_TOKEN.fullmatch(s):
        return True
    m = re.fullmatch(r"<(.+):\d+>", s)
    return bool(m and f"<{m.group(1)}:N>" in placeholders)


def _matches(expected, actual, placeholders):
    """Recorded value vs the test's value: a placeholder matches anything, a string holding
    placeholders matches the same literal text around them."""
    if isinstance(expected, str) and _is_placeholder(expected, placeholders):
        return True
    if isinstance(expected, str) and isinstance(actual, str):
        if expected == actual:
            return True
        texts = sorted((p for p in placeholders if not p.endswith(":N>")), key=len, reverse=True)
        alternation = "|".join([re.escape(t) for t in texts] + [ANGLE_TOKEN.pattern])
        parts = re.split(f"({alternation})", expected)
        if len(parts) == 1:
            return False
        rx = "".join(".+?" if i % 2 else re.escape(p) for i, p in enumerate(parts))
        return re.fullmatch(rx, actual, re.S) is not None
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            _matches(v, actual[k], placeholders) for k, v in expected.items()
        )
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(_matches(a, b, placeholders) for a, b in zip(expected, actual))
    return expected == actual and type(expected) is type(actual)


def _decode_payload(value):
    """A history input/output field as recorded: an object (LocalStack parsed JSON text that
    began with `{`) or the JSON text itself. Returns (value, ok)."""
    if isinstance(value, (dict, list)) or value is None:
        return value, True
    if isinstance(value, str):
        try:
            return json.loads(value), True
        except ValueError:
            return value, False
    return value, True


TASK_RESULT_EVENTS = {
    # event type: (details key, outcome)
    "TaskSucceeded": ("taskSucceededEventDetails", "succeeded"),
    "TaskFailed": ("taskFailedEventDetails", "failed"),
    "TaskTimedOut": ("taskTimedOutEventDetails", "timed_out"),
    "TaskStartFailed": ("taskStartFailedEventDetails", "failed"),
    "TaskSubmitFailed": ("taskSubmitFailedEventDetails", "failed"),
    "LambdaFunctionSucceeded": ("lambdaFunctionSucceededEventDetails", "succeeded"),
    "LambdaFunctionFailed": ("lambdaFunctionFailedEventDetails", "failed"),
    "LambdaFunctionTimedOut": ("lambdaFunctionTimedOutEventDetails", "timed_out"),
    "LambdaFunctionStartFailed": ("lambdaFunctionStartFailedEventDetails", "failed"),
    "LambdaFunctionScheduleFailed": ("lambdaFunctionScheduleFailedEventDetails", "failed"),
    "ActivitySucceeded": ("activitySucceededEventDetails", "succeeded"),
    "ActivityFailed": ("activityFailedEventDetails", "failed"),
    "ActivityTimedOut": ("activityTimedOutEventDetails", "timed_out"),
    "ActivityScheduleFailed": ("activityScheduleFailedEventDetails", "failed"),
}
TASK_SCHEDULE_EVENTS = {
    "TaskScheduled": ("taskScheduledEventDetails", "parameters"),
    "LambdaFunctionScheduled": ("lambdaFunctionScheduledEventDetails", "input"),
    "ActivityScheduled": ("activityScheduledEventDetails", "input"),
}


def _error_cause(details):
    out = {}
    if "error" in details:
        out["error"] = details["error"]
    if "cause" in details:
        out["cause"] = details["cause"]
    return out


def _latest_open(tasks, visits, typ):
    for eid, v in reversed(list(visits.items())):
        atts = v["attempts"]
        if typ in TASK_SCHEDULE_EVENTS:
            if not atts or "outcome" in atts[-1]:
                return eid
        elif atts and "outcome" not in atts[-1]:
            return eid
    return None


def _original_json_text(value, events):
    """Finds a string in the history that is JSON text for `value`."""
    found = []

    def visit(v):
        if isinstance(v, dict):
            for x in v.values():
                visit(x)
        elif isinstance(v, list):
            for x in v:
                visit(x)
        elif isinstance(v, str) and v[:1] in "{[" and not found:
            try:
                if json.loads(v) == value:
                    found.append(v)
            except ValueError:
                pass

    visit(events)
    if found:
        return found[0], True
    return json.dumps(value), False


def summarise_history(events):
    """Status, result, states entered, and per Task state visit the attempts' results."""
    visit_of = {}
    states_entered = []
    tasks = []
    visits = {}
    result = {"status": None}
    for e in events:
        if not isinstance(e, dict):
            continue
        typ = e.get("type", "")
        eid = e.get("id")
        prev = e.get("previousEventId")
        if not isinstance(eid, int) or not isinstance(prev, int):
            # A transformer rewrote the event ids (LocalStack does so to order Parallel
            # branches): the causal chain is gone, so events go to the latest open visit.
            eid, prev = ("rewritten", len(states_entered), typ), None
        if typ.endswith("StateEntered"):
            d = e.get("stateEnteredEventDetails", {})
            states_entered.append(d.get("name"))
            visit_of[eid] = None
            if typ == "TaskStateEntered":
                v = {"state": d.get("name"), "attempts": []}
                tasks.append(v)
                visits[eid] = v
                visit_of[eid] = eid
            continue
        # Follow the causal chain back to the visit this event belongs to.
        owner = visit_of.get(prev) if prev is not None else _latest_open(tasks, visits, typ)
        if typ.endswith("StateExited"):
            visit_of[eid] = None
            continue
        visit_of[eid] = owner
        if owner is None:
            pass
        elif typ in TASK_SCHEDULE_EVENTS:
            key, field = TASK_SCHEDULE_EVENTS[typ]
            d = e.get(key, {})
            params, ok = _decode_payload(d.get(field))
            att = {"resource": d.get("resource"), "resource_type": d.get("resourceType")}
            if field in d:
                att["parameters"] = params
                if not ok:
                    att["parameters_opaque"] = True
            if "timeoutInSeconds" in d:
                att["timeout_seconds"] = d["timeoutInSeconds"]
            if "heartbeatInSeconds" in d:
                att["heartbeat_seconds"] = d["heartbeatInSeconds"]
            visits[owner]["attempts"].append(att)
        elif typ == "TaskSubmitted":
            d = e.get("taskSubmittedEventDetails", {})
            if visits[owner]["attempts"]:
                out, ok = _decode_payload(d.get("output"))
                visits[owner]["attempts"][-1]["submitted"] = out
                if not ok:
                    visits[owner]["attempts"][-1]["submitted_opaque"] = True
        elif typ in TASK_RESULT_EVENTS:
            key, outcome = TASK_RESULT_EVENTS[typ]
            d = e.get(key, {})
            if not visits[owner]["attempts"]:
                visits[owner]["attempts"].append({})
            att = visits[owner]["attempts"][-1]
            att["outcome"] = outcome
            if outcome == "succeeded":
                out, ok = _decode_payload(d.get("output"))
                att["output"] = out
                if not ok:
                    att["output_opaque"] = True
            else:
                att.update(_error_cause(d))
                if isinstance(att.get("cause"), (dict, list)):
                    # LocalStack parsed JSON-looking cause text. AWS's own text usually survives
                    # elsewhere in the history (a Catch writes it into the state output as a
                    # string, which LocalStack leaves alone): use it. Otherwise rebuild it.
                    att["cause"], found = _original_json_text(att["cause"], events)
                    att["cause_text"] = "recorded" if found else "rebuilt"
        if typ == "ExecutionSucceeded":
            d = e.get("executionSucceededEventDetails", {})
            out, ok = _decode_payload(d.get("output"))
            result = {"status": "SUCCEEDED", "output": out}
            if not ok:
                result["output_opaque"] = True
        elif typ == "ExecutionFailed":
            result = {"status": "FAILED", **_error_cause(e.get("executionFailedEventDetails", {}))}
        elif typ == "ExecutionTimedOut":
            result = {"status": "TIMED_OUT", **_error_cause(e.get("executionTimedOutEventDetails", {}))}
        elif typ == "ExecutionAborted":
            result = {"status": "ABORTED", **_error_cause(e.get("executionAbortedEventDetails", {}))}
    return result, states_entered, tasks


def _event_types(events):
    return [e.get("type", "") for e in events]


# ----------------------------------------------------------------------------------------------
# Scope.

VARIABLE_REF = re.compile(r"(?<![\w$.])\$(?![.$\[])[A-Za-z_]")


def _walk(value, path=()):
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, path + (i,))


def classify(record, definition, events):
    """Returns None (in scope) or the reason the record is out of scope."""
    if record["marker"] != "validated":
        return f"not recorded against AWS (test marker: {record['marker'] or 'none'})"
    if record["machine_type"] == "EXPRESS" or record["start"] == "sync":
        return "Express workflow"
    if record["mocked"]:
        return "LocalStack mocked service integration"
    if definition is None:
        return "definition not captured (built outside the recorded calls)"
    if not isinstance(definition, dict):
        return "definition is not a JSON object"
    for path, v in _walk(definition):
        if path and path[-1] == "QueryLanguage" and v == "JSONata":
            return "JSONata"
    for path, v in _walk(definition):
        if path and path[-1] in ("Assign",):
            return "variables (Assign / $var)"
        if isinstance(v, str) and VARIABLE_REF.search(v) and _is_path_position(path):
            return "variables (Assign / $var)"
    for path, v in _walk(definition):
        if path and path[-1] in ("ItemReader", "ResultWriter", "ItemBatcher", "ToleratedFailureCount",
                                 "ToleratedFailurePercentage", "ToleratedFailureCountPath",
                                 "ToleratedFailurePercentagePath", "Label"):
            return "Distributed Map (ItemReader / ResultWriter / batching / tolerance / label)"
        if path and path[-1] == "Mode" and v == "DISTRIBUTED":
            return "Distributed Map (ItemReader / ResultWriter / batching / tolerance / label)"
        if path and path[-1] == "ExecutionType" and v == "EXPRESS":
            return "Distributed Map (ItemReader / ResultWriter / batching / tolerance / label)"
    for path, v in _walk(definition):
        if path and path[-1] == "Credentials":
            return "task Credentials (cross-account role assumption)"
    cause = record["result"].get("cause")
    if isinstance(cause, str) and (
        "could not be used to start the Task" in cause
        or re.search(r"The activity \S+ does not exist", cause)
    ):
        return "task refused by the service before it was scheduled (service-side validation)"
    types_ = set(_event_types(events))
    if "ExecutionAborted" in types_:
        return "stopped by a StopExecution call"
    if "ExecutionRedriven" in types_:
        return "redriven by a RedriveExecution call"
    if record["result"].get("status") is None:
        return "history has no terminal event"
    if any(t.startswith("MapRun") for t in types_):
        return "Distributed Map (ItemReader / ResultWriter / batching / tolerance / label)"
    return None


def _is_path_position(path):
    """Variable references can only appear where a JSONPath or intrinsic is read."""
    if not path:
        return False
    last = path[-1]
    if isinstance(last, str) and (last.endswith(".$") or last.endswith("Path") or last == "Variable"):
        return True
    return False


# ----------------------------------------------------------------------------------------------
# Main.


def _load_json(path):
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--localstack", required=True, help="a checkout of localstack/localstack")
    ap.add_argument("--commit", required=True, help="the commit of that checkout (recorded in fixtures)")
    ap.add_argument("--out", required=True, help="the fixtures directory to (re)write")
    ap.add_argument("-k", default=None, help="pytest -k expression (debugging)")
    args = ap.parse_args()

    try:
        import json5  # noqa: F401 - the templates are JSON5; the tests import it themselves
        import pytest
    except ImportError as e:
        sys.exit(f"missing dependency ({e}); run: pip install pytest json5")

    root = os.path.abspath(args.localstack)
    test_root = os.path.join(root, TEST_ROOT)
    if not os.path.isdir(test_root):
        sys.exit(f"{test_root} not found: --localstack must be a checkout of {SOURCE_REPO}")

    recorded_by_node = {}
    validation_by_node = {}
    snapshot_files = []
    for dirpath, _, files in os.walk(test_root):
        for fn in sorted(files):
            if fn.endswith(".snapshot.json"):
                p = os.path.join(dirpath, fn)
                snapshot_files.append(p)
                recorded_by_node.update(_load_json(p))
                vp = p[: -len(".snapshot.json")] + ".validation.json"
                if os.path.exists(vp):
                    validation_by_node.update(_load_json(vp))

    sys.meta_path.insert(0, StubFinder())
    sys.path.insert(0, root)
    # Waits in the tests are for real AWS; offline they only slow the run down.
    time.sleep = lambda *a, **k: None

    fixture_names = set()
    import ast

    for p in snapshot_files:
        py = p[: -len(".snapshot.json")] + ".py"
        if not os.path.exists(py):
            continue
        with open(py) as f:
            tree = ast.parse(f.read())
        local = set()
        for n in ast.walk(tree):
            if isinstance(n, ast.FunctionDef):
                for d in n.decorator_list:
                    if "fixture" in ast.unparse(d):
                        local.add(n.name)
        for n in ast.walk(tree):
            if isinstance(n, ast.FunctionDef) and n.name.startswith("test_"):
                for a in n.args.args + n.args.kwonlyargs:
                    fixture_names.add(a.arg)
        fixture_names -= local
    fixture_names -= {"self", "request", "monkeypatch", "tmp_path", "caplog"}
    # Parametrize arguments are not fixtures; pytest resolves them first, so a fixture of the
    # same name is never used.
    fixtures_mod = types.ModuleType("sfn_extract_fixtures")
    for k, v in _make_fixtures(sorted(fixture_names)).items():
        setattr(fixtures_mod, k, v)

    records = []
    runs = {}

    def on_result(nodeid, entry, world, error):
        runs[nodeid] = {"error": error, "pairs": len(world.pairs), "notes": list(world.notes)}
        # One record per execution: a DescribeExecution recorded beside the history of the same
        # execution is attached to it rather than counted as another execution.
        by_exec = collections.OrderedDict()
        for pair in world.pairs:
            by_exec.setdefault(pair["execution"]["arn"], []).append(pair)
        for pairs in by_exec.values():
            main_pairs = [p for p in pairs if p["kind"] in ("history", "output")] or pairs[:1]
            describes = [p for p in pairs if p["kind"] in ("describe", "sync") and p not in main_pairs]
            for pair in main_pairs:
                rec = build_record(nodeid, entry, validation_by_node.get(nodeid), world, pair, args)
                if describes:
                    rec["describe"] = [_describe_result(p["recorded"], p["key"] + p["pointer"]) for p in describes]
                records.append(rec)

    plugin = Plugin(recorded_by_node, validation_by_node, on_result)
    with tempfile.TemporaryDirectory() as tmp:
        ini = os.path.join(tmp, "pytest.ini")
        with open(ini, "w") as f:
            f.write("[pytest]\naddopts =\nfilterwarnings = ignore\n")
        pytest_args = [
            "-c", ini, "--rootdir", root, "-p", "no:cacheprovider", "--noconftest", "-q",
            "-p", "no:randomly", "-p", "no:skipping", "--disable-warnings", "--continue-on-collection-errors", "-o", "python_files=test_*.py",
            test_root,
        ]
        if args.k:
            pytest_args += ["-k", args.k]
        cwd = os.getcwd()
        os.chdir(root)
        try:
            pytest.main(pytest_args, plugins=[plugin, fixtures_mod])
        finally:
            os.chdir(cwd)

    write_out(args, records, runs, recorded_by_node, validation_by_node)


def build_record(nodeid, entry, validated, world, pair, args):
    execution = pair["execution"]
    transformers = pair["transformers"]
    kind = pair["kind"]
    recorded = pair["recorded"]
    definition = None
    definition_error = None
    if execution.get("definition") is not None:
        text = execution["definition"]
        if not isinstance(text, str):
            text = json.dumps(text)
        try:
            definition = _restore_integration_partition(json.loads(_apply_transformers(text, transformers)))
        except ValueError as e:
            definition_error = str(e)
    record = {
        "id": None,
        "source": {
            "node": nodeid,
            "snapshot_key": pair["key"] + pair["pointer"],
            "recorded_date": entry.get("recorded-date"),
        },
        # The replay starts its virtual clock at the recording date, so absolute timestamps
        # in definitions and inputs keep the distance from "now" they had on AWS.
        "start_ms": _recorded_ms(entry.get("recorded-date")),
        "validated": (validated or {}).get("last_validated_date"),
        "marker": world.marker,
        "kind": kind,
        "machine_type": execution.get("type"),
        "start": execution.get("start"),
        "mocked": execution.get("mocked"),
    }
    events = []
    input_from = "test"
    captured_input, captured_ok = _decode_payload(_apply_transformers(str(execution.get("input")), transformers))
    exec_input = captured_input
    if kind == "history":
        events = recorded.get("events", []) if isinstance(recorded, dict) else []
        result, states, tasks = summarise_history(events)
        started = next((e for e in events if e.get("type") == "ExecutionStarted"), None)
        if started is not None:
            d = started.get("executionStartedEventDetails", {})
            if "input" in d:
                # The test's own input is preferred when the recording agrees with it (up to
                # placeholders): it keeps values LocalStack masked, e.g. a timestamp.
                recorded_input, ok = _decode_payload(d["input"])
                placeholders = _placeholders(transformers)
                if captured_ok and ok and _matches(recorded_input, captured_input, placeholders):
                    exec_input, input_from = captured_input, "test"
                elif ok:
                    exec_input, input_from = recorded_input, "history"
        record["result"] = result
        record["states_entered"] = states
        record["tasks"] = tasks
    elif kind == "output":
        # Only the execution output was recorded (the test extracted it from the history).
        out, ok = _decode_payload(recorded)
        record["result"] = {"status": "SUCCEEDED", "output": out}
        if not ok:
            record["result"]["output_opaque"] = True
        record["states_entered"] = None
        record["tasks"] = []
    else:
        status = recorded.get("status") if isinstance(recorded, dict) else None
        res = {"status": status}
        if isinstance(recorded, dict):
            if "output" in recorded:
                res["output"], _ = _decode_payload(recorded["output"])
            res.update(_error_cause(recorded))
        record["result"] = res
        record["states_entered"] = None
        record["tasks"] = []
    record["input"] = exec_input
    record["input_source"] = input_from
    ctx = {
        "execution_id": execution["arn"],
        "execution_name": execution["name"],
        "state_machine_id": execution["machine_arn"],
        "state_machine_name": execution["machine_name"],
        "role_arn": execution.get("role"),
    }
    record["context"] = json.loads(_apply_transformers(json.dumps(ctx), transformers))
    record["definition"] = definition
    if definition_error:
        record["definition_error"] = definition_error
    record["placeholders"] = _placeholders(transformers)
    reason = classify(record, definition, events)
    record["scope"] = "in" if reason is None else "out"
    if reason:
        record["out_of_scope_reason"] = reason
    return record


def _recorded_ms(text):
    import datetime

    try:
        t = datetime.datetime.strptime(text, "%d-%m-%Y, %H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    except (TypeError, ValueError):
        return None
    return int(t.timestamp() * 1000)


def _describe_result(recorded, key):
    out = {"snapshot_key": key}
    if isinstance(recorded, dict):
        out["status"] = recorded.get("status")
        if "output" in recorded:
            out["output"], _ = _decode_payload(recorded["output"])
        out.update(_error_cause(recorded))
    return out


def _restore_integration_partition(definition):
    """LocalStack's partition placeholder also lands in `arn:aws:states:::...` integration
    resources, which name the integration rather than an account's resource: put them back."""
    for _, v in _walk(definition):
        if isinstance(v, dict) and isinstance(v.get("Resource"), str):
            r = v["Resource"]
            if r.startswith("arn:<partition>:states:::"):
                v["Resource"] = "arn:aws:" + r[len("arn:<partition>:"):]
    return definition


def write_out(args, records, runs, recorded_by_node, validation_by_node):
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    for fn in os.listdir(out):
        if fn.endswith(".json") and fn != "summary.json":
            os.remove(os.path.join(out, fn))
    by_module = collections.OrderedDict()
    for r in records:
        path, _, rest = r["source"]["node"].partition("::")
        r["source"]["repo"] = SOURCE_REPO
        r["source"]["commit"] = args.commit
        r["source"]["path"] = path
        r["id"] = f"{rest}/{r['source']['snapshot_key']}"
        by_module.setdefault(path, []).append(r)
    for path, recs in by_module.items():
        name = os.path.relpath(path, TEST_ROOT).replace(os.sep, "__")
        name = re.sub(r"\.py$", "", name) + ".json"
        doc = {
            "schema": SCHEMA_VERSION,
            "source": {
                "repo": SOURCE_REPO,
                "commit": args.commit,
                "path": path,
                "licence": "Apache-2.0",
            },
            "executions": recs,
        }
        with open(os.path.join(out, name), "w") as f:
            json.dump(doc, f, indent=1, sort_keys=False, ensure_ascii=False)
            f.write("\n")

    reasons = collections.Counter()
    scope = collections.Counter()
    for r in records:
        scope[r["scope"]] += 1
        if r["scope"] == "out":
            reasons[r["out_of_scope_reason"]] += 1
    recorded_histories = 0
    for node, entry in recorded_by_node.items():
        for k, v in entry["recorded-content"].items():
            if isinstance(v, dict) and "events" in v:
                recorded_histories += 1
    unpaired = {n: r for n, r in runs.items() if r["pairs"] == 0}
    stale = 0
    for node, entry in recorded_by_node.items():
        if node not in runs:
            for k, v in entry["recorded-content"].items():
                if isinstance(v, dict) and "events" in v:
                    stale += 1
    summary = {
        "source": {"repo": SOURCE_REPO, "commit": args.commit},
        "executions": len(records),
        "in_scope": scope["in"],
        "out_of_scope": scope["out"],
        "out_of_scope_by_reason": dict(reasons.most_common()),
        "snapshot_tests": len(recorded_by_node),
        "snapshot_tests_run": len(runs),
        "snapshot_tests_without_a_paired_execution": len(unpaired),
        "recorded_histories_in_snapshots": recorded_histories,
        "recorded_histories_of_tests_that_no_longer_exist": stale,
        "tests_without_a_paired_execution": {
            n: (r["error"] or "no execution history matched") for n, r in sorted(unpaired.items())
        },
    }
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "tests_without_a_paired_execution"}, indent=1))


if __name__ == "__main__":
    main()
