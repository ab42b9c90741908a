"""values.schema.json describes every key of values.yaml, and refuses unknown top-level keys."""
import json

import yaml

from .report import check


def schema_coverage(values_path, schema_path):
    with open(values_path) as f:
        values = yaml.safe_load(f)
    with open(schema_path) as f:
        schema = json.load(f)
    missing, extra = [], []

    def walk(v, s, path):
        props = s.get("properties")
        if isinstance(v, dict) and props is not None:
            for k, sub in v.items():
                if k not in props:
                    missing.append(path + k)
                else:
                    walk(sub, props[k], path + k + ".")
            for k in props:
                if k not in v and k != "global" and s.get("additionalProperties") is False and path.count(".") < 1:
                    extra.append(path + k)

    walk(values, schema, "")
    check("values.schema.json describes every key of values.yaml", not missing, missing)
    check("every top-level schema property is in values.yaml", not extra, extra)
    check("schema rejects unknown top-level keys (additionalProperties false)", schema.get("additionalProperties") is False)
