"""Checks Kubernetes manifests against the restricted Pod Security Standard, as a namespace
labelled pod-security.kubernetes.io/enforce=restricted admits pods
(https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted).

    python restricted_pods.py FILE...

Every pod template (Deployment, StatefulSet, DaemonSet, Job, Pod) is checked; prints each
violation as "file: resource: what", and exits 1 when there is any.
"""

import sys

import yaml

ALLOWED_VOLUMES = {
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
    "projected", "secret",
}
SECCOMP = {"RuntimeDefault", "Localhost"}


def pod_spec(resource):
    kind = resource.get("kind")
    if kind == "Pod":
        return resource.get("spec") or {}
    if kind in {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}:
        return ((resource.get("spec") or {}).get("template") or {}).get("spec") or {}
    if kind == "CronJob":
        job = (resource.get("spec") or {}).get("jobTemplate") or {}
        return (((job.get("spec") or {}).get("template") or {}).get("spec")) or {}
    return None


def violations(spec):
    pod = spec.get("securityContext") or {}
    found = []
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field):
            found.append(f"{field} is set")
    for volume in spec.get("volumes") or []:
        kinds = set(volume) - {"name"}
        if not kinds <= ALLOWED_VOLUMES:
            found.append(f"volume {volume.get('name')} is of a kind the profile refuses: {kinds}")
    if pod.get("runAsUser") == 0:
        found.append("the pod runs as user 0")
    containers = (spec.get("containers") or []) + (spec.get("initContainers") or [])
    for container in containers:
        name = container.get("name")
        own = container.get("securityContext") or {}
        if own.get("privileged"):
            found.append(f"container {name} is privileged")
        if own.get("allowPrivilegeEscalation") is not False:
            found.append(f"container {name} does not set allowPrivilegeEscalation: false")
        caps = own.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            found.append(f"container {name} does not drop ALL capabilities")
        if set(caps.get("add") or []) - {"NET_BIND_SERVICE"}:
            found.append(f"container {name} adds capabilities besides NET_BIND_SERVICE")
        if own.get("runAsNonRoot", pod.get("runAsNonRoot")) is not True:
            found.append(f"container {name} may run as root (runAsNonRoot is not true)")
        if own.get("runAsUser", pod.get("runAsUser")) == 0:
            found.append(f"container {name} runs as user 0")
        seccomp = (own.get("seccompProfile") or pod.get("seccompProfile") or {}).get("type")
        if seccomp not in SECCOMP:
            found.append(f"container {name} has no RuntimeDefault or Localhost seccomp profile")
        for port in container.get("ports") or []:
            if port.get("hostPort"):
                found.append(f"container {name} uses a host port")
    return found


def main(paths):
    failed = False
    checked = 0
    for path in paths:
        with open(path) as file:
            for resource in yaml.safe_load_all(file):
                spec = pod_spec(resource or {})
                if spec is None:
                    continue
                checked += 1
                name = f"{resource['kind']}/{resource['metadata']['name']}"
                for violation in violations(spec):
                    print(f"{path}: {name}: {violation}")
                    failed = True
    if checked == 0:
        print("no pod templates in the files given")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
