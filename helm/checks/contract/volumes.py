"""The data volume (a PVC per pod, or an emptyDir without persistence), /tmp, and the
volume-permissions init container that hands the data volume to the ringkv user."""
from .manifests import g
from .report import check


def check_volumes(r):
    exp, c, pod = r.exp, r.container, r.pod
    mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    vcts = {g(t, "metadata", "name"): t for t in r.spec.get("volumeClaimTemplates", []) or []}
    data = mounts.get("/var/lib/ringkv")
    if exp["persistence"]:
        t = vcts.get(data)
        check("/var/lib/ringkv is a volumeClaimTemplate of %s" % exp["size"],
              t is not None and g(t, "spec", "resources", "requests", "storage") == exp["size"], (data, list(vcts)))
        if t is not None:
            want = exp.get("storageClassName")
            check("data PVC storageClassName = %s" % ("unset (default class)" if want is None else repr(want)),
                  g(t, "spec", "storageClassName") == want, g(t, "spec", "storageClassName"))
    else:
        check("/var/lib/ringkv is an emptyDir (persistence disabled)",
              "emptyDir" in (vols.get(data) or {}) and not vcts, (data, vols, list(vcts)))
    check("/tmp is an emptyDir", "emptyDir" in (vols.get(mounts.get("/tmp")) or {}), mounts)

    inits = {i["name"]: i for i in pod.get("initContainers", []) or []}
    vp = inits.get("volume-permissions")
    if not exp["volumePermissions"]:
        check("no volume-permissions init container (off by default)", vp is None, list(inits))
        return
    cmd = " ".join(vp.get("command", []) + vp.get("args", [])) if vp else ""
    check("volume-permissions init container: chown 10001:10001 /var/lib/ringkv as root",
          vp and "chown" in cmd and "10001:10001" in cmd and "/var/lib/ringkv" in cmd
          and g(vp, "securityContext", "runAsUser") == 0, vp)
    check("volume-permissions mounts the data volume at /var/lib/ringkv",
          vp and any(m["mountPath"] == "/var/lib/ringkv" and m["name"] == data for m in vp.get("volumeMounts", [])))
    check("volume-permissions image is chown-capable (default: the app image)",
          vp and vp.get("image") == exp.get("volumePermissionsImage", r.image), vp and vp.get("image"))
