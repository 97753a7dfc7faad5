#!/usr/bin/env python3
"""Turns Kubernetes manifests into what `mcpx schema validate` takes, for scripts/deploy-check.

    k8s-schema.py SCHEMA_DIR MANIFEST.yaml OUT_DIR

For each resource in the manifest, writes OUT_DIR/<kind>-<name>.json (the resource as JSON) and
OUT_DIR/<kind>-<name>.schema.json: the resource's schema from SCHEMA_DIR (kubernetes-validate's
`v<version>-local-strict` folder, JSON Schema 2020-12) as one document. Those schemas point into
a shared `_definitions.json` (1.5 MB, over schemaval's 1 MiB bound, and a remote reference,
which schemaval refuses); here the definitions the resource reaches are copied under the
document's own `$defs` and every reference is rewritten to point there. Nothing else changes.
Prints one line per resource: `INSTANCE SCHEMA`.
"""

import json
import os
import re
import sys

import yaml

DEFINITIONS = "_definitions.json"
REF = re.compile(r"^(?:/api/_definitions\.json|https://kubernetes\.io/api/_definitions\.json)?#/\$defs/(.+)$")


def schema_file(resource):
    """kubernetes-validate's naming: deployment-apps-v1.json, service-v1.json."""
    api = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", resource["apiVersion"])
    return "%s-%s.json" % (resource["kind"].lower(), api)


def rewrite(node, definitions, wanted):
    """Points every reference at the document's own $defs; collects the definitions reached."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$ref":
                match = REF.match(value)
                if not match:
                    sys.exit("unexpected reference %s" % value)
                name = match.group(1)
                if name not in definitions:
                    sys.exit("reference %s names no definition" % value)
                wanted.add(name)
                out[key] = "#/$defs/" + name
            else:
                out[key] = rewrite(value, definitions, wanted)
        return out
    if isinstance(node, list):
        return [rewrite(item, definitions, wanted) for item in node]
    return node


def inline(schema, definitions):
    wanted = set()
    root = rewrite(schema, definitions, wanted)
    root.pop("$id", None)
    defs, done = {}, set()
    while wanted - done:
        name = sorted(wanted - done)[0]
        done.add(name)
        defs[name] = rewrite(definitions[name], definitions, wanted)
    root["$defs"] = defs
    return root


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    schema_dir, manifest, out_dir = sys.argv[1:]
    with open(os.path.join(schema_dir, DEFINITIONS)) as f:
        definitions = json.load(f)["$defs"]
    with open(manifest) as f:
        resources = [r for r in yaml.safe_load_all(f) if r]
    os.makedirs(out_dir, exist_ok=True)
    for resource in resources:
        with open(os.path.join(schema_dir, schema_file(resource))) as f:
            schema = inline(json.load(f), definitions)
        stem = os.path.join(out_dir, "%s-%s" % (resource["kind"].lower(), resource["metadata"]["name"]))
        with open(stem + ".json", "w") as f:
            json.dump(resource, f, indent=1)
        with open(stem + ".schema.json", "w") as f:
            json.dump(schema, f)
        print(stem + ".json", stem + ".schema.json")


if __name__ == "__main__":
    main()
