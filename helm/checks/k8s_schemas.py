"""Writes the JSON schemas kubeconform validates against, one file per kind, from Kubernetes' own
OpenAPI document (api/openapi-spec/swagger.json of the k8s.io/kubernetes module, which the Go module
proxy serves: the usual schema repository is on GitHub, out of reach here).

  k8s_schemas.py SWAGGER_JSON OUT_DIR [CRD_YAML...]

and, for custom resources the chart renders (the Prometheus Operator's ServiceMonitor and
PrometheusRule), from the openAPIV3Schema of their CRDs. Each file is named as kubeconform's -schema-location template
OUT_DIR/{{ .ResourceKind }}{{ .KindSuffix }}.json expects (statefulset-apps-v1.json, service-v1.json)
and holds the kind's definition with the definitions it refers to. Like the strict schemas of
openapi2jsonschema, objects reject properties they do not declare (a misspelt field fails), any field
may be null, and the int-or-string and quantity types take both forms they have in YAML.
"""
import json
import os
import sys

REF = "#/definitions/"
INT_OR_STRING = {"oneOf": [{"type": "string"}, {"type": "integer"}]}
QUANTITY = {"oneOf": [{"type": "string"}, {"type": "number"}]}


def file_name(gvk):
    group, version, kind = gvk["group"], gvk["version"], gvk["kind"]
    suffix = "-%s-%s" % (group.split(".")[0], version) if group else "-%s" % version
    return "%s%s.json" % (kind.lower(), suffix)


def tighten(schema):
    """A copy of one definition as a strict, null-tolerant JSON schema."""
    if isinstance(schema, list):
        return [tighten(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if schema.get("format") == "int-or-string":
        return dict(INT_OR_STRING)
    out = {k: tighten(v) for k, v in schema.items() if k != "x-kubernetes-group-version-kind"}
    if isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    if "properties" in schema and "additionalProperties" not in schema \
            and not schema.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    return out


def refs(schema):
    if isinstance(schema, dict):
        if isinstance(schema.get("$ref"), str) and schema["$ref"].startswith(REF):
            yield schema["$ref"][len(REF):]
        for v in schema.values():
            yield from refs(v)
    elif isinstance(schema, list):
        for v in schema:
            yield from refs(v)


def closure(definitions, name):
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(refs(definitions[n]))
    return seen


def standalone(definitions, name):
    defs = {}
    for n in closure(definitions, name):
        defs[n] = QUANTITY if n.endswith(".api.resource.Quantity") else tighten(definitions[n])
    return {"$schema": "http://json-schema.org/draft-07/schema#", "$ref": REF + name, "definitions": defs}


def crd_schemas(crd):
    """{file name: schema} for each version a CustomResourceDefinition serves."""
    out = {}
    for version in crd["spec"]["versions"]:
        gvk = {"group": crd["spec"]["group"], "version": version["name"], "kind": crd["spec"]["names"]["kind"]}
        schema = tighten(version["schema"]["openAPIV3Schema"])
        out[file_name(gvk)] = dict(schema, **{"$schema": "http://json-schema.org/draft-07/schema#"})
    return out


def write_all(swagger, out_dir):
    definitions = swagger["definitions"]
    os.makedirs(out_dir, exist_ok=True)
    written = 0
    for name, schema in sorted(definitions.items()):
        gvks = schema.get("x-kubernetes-group-version-kind") or []
        # List kinds and the like share a definition across groups; a resource has exactly one.
        if len(gvks) != 1 or "apiVersion" not in schema.get("properties", {}):
            continue
        with open(os.path.join(out_dir, file_name(gvks[0])), "w") as f:
            json.dump(standalone(definitions, name), f)
        written += 1
    return written


def write_crds(paths, out_dir):
    import yaml
    written = 0
    for path in paths:
        with open(path) as f:
            for name, schema in crd_schemas(yaml.safe_load(f)).items():
                with open(os.path.join(out_dir, name), "w") as out:
                    json.dump(schema, out)
                written += 1
    return written


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        print("%d schemas" % write_all(json.load(f), sys.argv[2]))
    print("%d schemas of custom resources" % write_crds(sys.argv[3:], sys.argv[2]))
