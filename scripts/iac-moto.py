#!/usr/bin/env python3
"""Deploys the exported stacks on moto's CloudFormation, as a user deploys them on AWS.

  PYTHONPATH=.tools/moto scripts/iac-moto.py ENDPOINT TPF_SFN ZIP

Compiles the restaurant sample with the gateway binding and its queue transport twice, as
releases N and N+1, with a config for this emulator; creates TPF's await-interaction table
(stream on) and the bucket holding the functions' zip; then creates the wake-path stack (the
gateway host and the relay) and both release stacks (each the driver alone), checks that every
resource of each template exists, and retires release N by deleting its stack: N+1's machine and
the wake path stay. Then the same for the Lambda durable functions backend: two release stacks,
each a driver function with its spec and one published version. Action API v1's bindings no
longer compile (ACTION_API_V1_RETIRED). Reaches nothing but the loopback endpoint.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import boto3

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONTRACT = os.path.join(ROOT, "examples/contracts/restaurant-approval.pipeline-contract.json")
RELEASE = os.path.join(ROOT, "examples/contracts/restaurant-approval.pipeline-release.json")


def fail(msg):
    raise SystemExit(f"iac-moto: {msg}")


def wait(cf, stack, goal):
    for _ in range(300):
        try:
            s = cf.describe_stacks(StackName=stack)["Stacks"][0]
        except cf.exceptions.ClientError:
            if goal == "DELETE_COMPLETE":
                return
            raise
        status = s["StackStatus"]
        if status == goal:
            return s
        if status.endswith("FAILED") or status.endswith("ROLLBACK_COMPLETE"):
            events = cf.describe_stack_events(StackName=stack)["StackEvents"]
            reasons = [f"{e['LogicalResourceId']}: {e.get('ResourceStatusReason')}"
                       for e in events if "FAILED" in e.get("ResourceStatus", "")]
            fail(f"{stack} ended {status}: {reasons}")
        time.sleep(0.2)
    fail(f"{stack} never reached {goal}")


def compile_release(tpf_sfn, out, config, release_file, backend="step-functions"):
    subprocess.run([tpf_sfn, "compile", CONTRACT, "--release", release_file, "--config", config,
                    "--out", out, "--emit", "cloudformation", "--backend", backend],
                   check=True, capture_output=True)
    with open(os.path.join(out, "cloudformation.json")) as f:
        release = f.read()
    if backend != "step-functions":
        return release, None
    with open(os.path.join(out, "wake-path", "cloudformation.json")) as f:
        wake = f.read()
    return release, wake


def durable_releases(cf, lam, tpf_sfn, d, run, bucket, next_file, gateway):
    """Both releases as durable driver functions: each its own function, its spec in the
    environment, one published version, no sweeper (the gateway driver sweeps TPF itself);
    retiring N leaves N+1 untouched."""
    config = os.path.join(d, "durable.tpf-sfn.toml")
    with open(config, "w") as f:
        f.write(f'name-prefix = "{run}d"\n[binding]\nkind = "gateway"\n[binding.gateway]\n'
                f'function-arn = "{gateway}"\n'
                f'starter-function-arn = "arn:aws:lambda:us-east-1:123456789012:function:{run}-gateway-starter"\n')
    caps = ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM"]
    params = [{"ParameterKey": "CodeS3Bucket", "ParameterValue": bucket},
              {"ParameterKey": "CodeS3Key", "ParameterValue": "tpf-sfn-lambda.zip"}]
    functions = {}
    for tag, release_file in (("n", RELEASE), ("n1", next_file)):
        out = os.path.join(d, f"durable-{tag}")
        template, _ = compile_release(tpf_sfn, out, config, release_file, "lambda-durable")
        with open(os.path.join(out, "driver.durable.json")) as f:
            spec = json.load(f)
        resources = json.loads(template)["Resources"]
        if "Sweeper" in resources or "ActionTokenParameter" in json.loads(template).get("Parameters", {}):
            fail(f"the gateway durable release stack carries Action API v1 pieces: {sorted(resources)}")
        stack = f"{run}-durable-{tag}"
        cf.create_stack(StackName=stack, TemplateBody=template, Capabilities=caps,
                        Parameters=params)
        wait(cf, stack, "CREATE_COMPLETE")
        check_resources(cf, stack, template)
        name = resources["Driver"]["Properties"]["FunctionName"]
        conf = lam.get_function(FunctionName=name)["Configuration"]
        env = conf.get("Environment", {}).get("Variables", {})
        if json.loads(env.get("TPF_SFN_DURABLE_SPEC", "null")) != spec:
            fail(f"{name}: the function's spec is not the compiled driver.durable.json")
        if env.get("TPF_SFN_HANDLER") != "durable-driver":
            fail(f"{name}: handler {env.get('TPF_SFN_HANDLER')}")
        versions = [v["Version"] for v in
                    lam.list_versions_by_function(FunctionName=name)["Versions"]]
        if not any(v != "$LATEST" for v in versions):
            fail(f"{name}: no published version ({versions}): executions would run $LATEST")
        functions[tag] = name
    if functions["n"] == functions["n1"]:
        fail(f"durable releases N and N+1 share a function: {functions}")
    cf.delete_stack(StackName=f"{run}-durable-n")
    wait(cf, f"{run}-durable-n", "DELETE_COMPLETE")
    lam.get_function(FunctionName=functions["n1"])
    return functions


# Types moto's CloudFormation accepts but does not create (it has no CloudFormation model for
# them); cfn-lint's schema check is their only emulator-free evidence. Anything else missing
# after CREATE_COMPLETE fails the check.
MOTO_SKIPS = {"AWS::CloudWatch::Alarm", "AWS::Scheduler::Schedule"}
skipped = set()


def check_resources(cf, stack, template):
    have = {r["LogicalResourceId"]: r for r in
            cf.list_stack_resources(StackName=stack)["StackResourceSummaries"]}
    want = json.loads(template)["Resources"]
    missing = {k: v["Type"] for k, v in want.items() if k not in have}
    unexpected = {k: t for k, t in missing.items() if t not in MOTO_SKIPS}
    if unexpected:
        fail(f"{stack}: resources missing after CREATE_COMPLETE: {unexpected}")
    skipped.update(missing.values())
    return have


def main():
    endpoint, tpf_sfn, zip_path = sys.argv[1:4]
    kw = dict(endpoint_url=endpoint, region_name="us-east-1",
              aws_access_key_id="testing", aws_secret_access_key="testing")
    cf, ddb, s3, lam, sqs, logs = (boto3.client(s, **kw) for s in (
        "cloudformation", "dynamodb", "s3", "lambda", "sqs", "logs"))
    run = f"iac{os.getpid()}"
    # TPF's await-interaction table, whose stream the gateway host's wake-up reads.
    await_stream_arn = ddb.create_table(
        TableName=f"{run}_tpf_await_interaction",
        KeySchema=[{"AttributeName": "tenant_id", "KeyType": "HASH"},
                   {"AttributeName": "interaction_id", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "tenant_id", "AttributeType": "S"},
                              {"AttributeName": "interaction_id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )["TableDescription"]["LatestStreamArn"]
    gateway = "arn:aws:lambda:us-east-1:123456789012:function:tpf-action:1"
    bucket = f"{run}-code"
    s3.create_bucket(Bucket=bucket)
    with open(zip_path, "rb") as f:
        s3.put_object(Bucket=bucket, Key="tpf-sfn-lambda.zip", Body=f.read())

    with tempfile.TemporaryDirectory() as d:
        queue = f"{run}-gateway"
        config = os.path.join(d, "tpf-sfn.toml")
        with open(config, "w") as f:
            f.write(f'name-prefix = "{run}"\n[binding]\nkind = "gateway"\n[binding.gateway]\n'
                    f'function-arn = "{gateway}"\ntransport = "queue"\n'
                    f'queue-url = "{endpoint}/123456789012/{queue}"\n'
                    f'starter-function-arn = "arn:aws:lambda:us-east-1:123456789012:function:{run}-gateway-starter"\n'
                    # The scheduled sweep: its role deploys here, its schedule is cfn-lint's.
                    '[sweeper]\nmode = "schedule"\nschedule = "rate(1 minute)"\n')
        with open(RELEASE) as f:
            descriptor = json.load(f)
        descriptor["releaseVersion"] = "2026.12.2"
        next_file = os.path.join(d, "next.pipeline-release.json")
        with open(next_file, "w") as f:
            json.dump(descriptor, f)
        release_n, wake = compile_release(tpf_sfn, os.path.join(d, "n"), config, RELEASE)
        release_next, wake_next = compile_release(tpf_sfn, os.path.join(d, "n1"), config, next_file)
        if wake != wake_next:
            fail("the wake-path template differs between releases")
        params = json.loads(wake)["Parameters"]
        for retired in ("ExecutionTableStreamArn", "ActionUrl", "ActionTokenParameter"):
            if retired in params:
                fail(f"the wake path still asks for Action API v1's {retired}: {sorted(params)}")

        caps = ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM"]
        # GatewayFunctionArn defaults to the binding's gateway: the host is there without being told.
        cf.create_stack(StackName=f"{run}-wake-path", TemplateBody=wake, Capabilities=caps,
                        Parameters=[
                            {"ParameterKey": "CodeS3Bucket", "ParameterValue": bucket},
                            {"ParameterKey": "AwaitInteractionStreamArn", "ParameterValue": await_stream_arn},
                        ])
        wait(cf, f"{run}-wake-path", "CREATE_COMPLETE")
        check_resources(cf, f"{run}-wake-path", wake)
        for fn, mappings in ((f"{run}-relay", 1), (f"{run}-gateway-wakeup", 2),
                             (f"{run}-gateway-reconciler", 0), (f"{run}-gateway-starter", 0)):
            conf = lam.get_function(FunctionName=fn)["Configuration"]
            if conf["Runtime"] != "provided.al2023":
                fail(f"{fn}: runtime {conf['Runtime']}")
            found = lam.list_event_source_mappings(FunctionName=fn)["EventSourceMappings"]
            if len(found) != mappings:
                fail(f"{fn}: {len(found)} event source mappings, want {mappings}")
        try:
            lam.get_function(FunctionName=f"{run}-bridge")
            fail("the wake path still deploys Action API v1's bridge")
        except lam.exceptions.ResourceNotFoundException:
            pass
        env = lam.get_function(FunctionName=f"{run}-relay")["Configuration"]["Environment"]["Variables"]
        if env.get("TPF_SFN_GATEWAY_FUNCTION_ARN") != gateway or "TPF_SFN_ACTION_URL" in env:
            fail(f"the relay's environment: {env}")
        # The gateway host: the wake-up reads TPF's await-interaction stream and the binding
        # table's, which the stack made as TPF's template does.
        sources = {m["EventSourceArn"]: m for m in
                   lam.list_event_source_mappings(FunctionName=f"{run}-gateway-wakeup")["EventSourceMappings"]}
        if await_stream_arn not in sources:
            fail(f"the gateway wake-up does not read TPF's await-interaction stream: {list(sources)}")
        for m in sources.values():
            if m.get("BatchSize") != 10 or m.get("MaximumRetryAttempts") != 5:
                fail(f"the gateway wake-up's mapping is not TPF's: {m}")
        outputs = {o["OutputKey"]: o["OutputValue"] for o in
                   cf.describe_stacks(StackName=f"{run}-wake-path")["Stacks"][0].get("Outputs", [])}
        binding = ddb.describe_table(TableName=outputs["CallbackBindingTableName"])["Table"]
        if [i["IndexName"] for i in binding.get("GlobalSecondaryIndexes", [])] != ["provider-execution-index"]:
            fail(f"the binding table lacks TPF's provider-execution-index: {binding}")
        if binding["LatestStreamArn"] not in sources:
            fail(f"the gateway wake-up does not read the binding table's stream: {list(sources)}")
        sqs.get_queue_url(QueueName=queue)
        sqs.get_queue_url(QueueName=f"{queue}-dlq")
        groups = {g["logGroupName"] for p in logs.get_paginator("describe_log_groups").paginate()
                  for g in p["logGroups"]}
        if f"/aws/lambda/{run}-relay" not in groups:
            fail(f"log group /aws/lambda/{run}-relay missing")

        # moto's CloudFormation keeps state machines in its non-executing Step Functions
        # backend, which the Step Functions API of the executing one does not list: the stack's
        # physical ids are the evidence here.
        drivers = {}
        for tag, template in (("n", release_n), ("n1", release_next)):
            kinds = {k for k, v in json.loads(template)["Resources"].items()
                     if v["Type"] not in MOTO_SKIPS}
            if kinds != {"DriverRole", "Driver"}:
                fail(f"the release stack holds {sorted(kinds)}, want the driver and its role alone")
            stack = f"{run}-release-{tag}"
            cf.create_stack(StackName=stack, TemplateBody=template, Capabilities=caps)
            wait(cf, stack, "CREATE_COMPLETE")
            have = check_resources(cf, stack, template)
            name = json.loads(template)["Resources"]["Driver"]["Properties"]["StateMachineName"]
            if not have["Driver"]["PhysicalResourceId"].endswith(f":stateMachine:{name}"):
                fail(f"{stack}: driver is {have['Driver']['PhysicalResourceId']}, want {name}")
            drivers[tag] = name
        if drivers["n"] == drivers["n1"]:
            fail(f"releases N and N+1 share a driver name: {drivers}")

        # Retiring release N: its stack goes, N+1's machine and the wake path stay.
        cf.delete_stack(StackName=f"{run}-release-n")
        wait(cf, f"{run}-release-n", "DELETE_COMPLETE")
        kept = check_resources(cf, f"{run}-release-n1", release_next)
        if not kept["Driver"]["PhysicalResourceId"].endswith(drivers["n1"]):
            fail(f"release N+1's driver after retiring N: {kept['Driver']}")
        check_resources(cf, f"{run}-wake-path", wake)
        lam.get_function(FunctionName=f"{run}-gateway-starter")
        durable = durable_releases(cf, lam, tpf_sfn, d, run, bucket, next_file, gateway)
        print(f"moto: durable release stacks CREATE_COMPLETE, one function and published "
              f"version per release ({', '.join(durable.values())}); release N retired")
        print(f"moto: wake-path stack and two release stacks CREATE_COMPLETE "
              f"({len(json.loads(wake)['Resources'])} + 2 x {len(json.loads(release_n)['Resources'])} "
              f"resources; moto does not create {', '.join(sorted(skipped)) or 'nothing'}); "
              f"release N retired, N+1 and the wake path kept")


if __name__ == "__main__":
    main()
