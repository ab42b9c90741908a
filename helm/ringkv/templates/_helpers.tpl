{{/*
Expand the name of the chart.
*/}}
{{- define "ringkv.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Create a default fully qualified app name.
We truncate at 52 chars (not 63): the StatefulSet controller adds the label
controller-revision-hash=<name>-<10 char hash> to every pod, and label values
are limited to 63 chars.
If release name contains chart name it will be used as a full name.
*/}}
{{- define "ringkv.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Create chart name and version as used by the chart label.
*/}}
{{- define "ringkv.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Common labels
*/}}
{{- define "ringkv.labels" -}}
helm.sh/chart: {{ include "ringkv.chart" . }}
{{ include "ringkv.selectorLabels" . }}
app.kubernetes.io/version: {{ include "ringkv.imageTag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Selector labels
*/}}
{{- define "ringkv.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ringkv.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Labels of what runs beside the nodes, the helm test pod and the loadtest Job:
(dict "ctx" $ "component" "test"). Deliberately NOT a superset of the selector
labels, so that the Services, the PodDisruptionBudget and the StatefulSet never
select them (the client Service must never send requests to the k6 pod).
*/}}
{{- define "ringkv.componentLabels" -}}
helm.sh/chart: {{ include "ringkv.chart" .ctx }}
app.kubernetes.io/name: {{ include "ringkv.name" .ctx }}-{{ .component }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
{{- end }}

{{/*
Create the name of the service account to use
*/}}
{{- define "ringkv.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ringkv.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Name of the headless Service (peer discovery, stable per-pod DNS names).
*/}}
{{- define "ringkv.headlessServiceName" -}}
{{- printf "%s-headless" (include "ringkv.fullname" .) }}
{{- end }}

{{/*
DNS name that every node resolves to discover its peers:
<headless-service>.<namespace>.svc.<clusterDomain>, with the namespace taken
from the POD_NAMESPACE env var (Kubernetes dependent env var expansion).
*/}}
{{- define "ringkv.discoveryDnsName" -}}
{{- printf "%s.$(POD_NAMESPACE).svc.%s" (include "ringkv.headlessServiceName" .) .Values.clusterDomain }}
{{- end }}

{{/*
"https" with tls.enabled, "http" otherwise: the scheme of the node URLs (peers discovered
through DNS take the scheme of the node's own URL) and of the probes.
*/}}
{{- define "ringkv.scheme" -}}
{{- if .Values.tls.enabled }}https{{ else }}http{{ end }}
{{- end }}

{{/*
This node's stable URL: <scheme>://<pod>.<headless-service>.<namespace>.svc.<clusterDomain>:<http port>
*/}}
{{- define "ringkv.clusterSelfUrl" -}}
{{- printf "%s://$(POD_NAME).%s:%d" (include "ringkv.scheme" .) (include "ringkv.discoveryDnsName" .) (int .Values.containerPorts.http) }}
{{- end }}

{{/*
Name of the Secret holding the cluster secret (keys cluster-secret and, during a
rotation, previous-cluster-secret): cluster.existingSecret, or <fullname>, which
the chart renders (secret.yaml).
*/}}
{{- define "ringkv.secretName" -}}
{{- if .Values.cluster.existingSecret }}
{{- .Values.cluster.existingSecret }}
{{- else }}
{{- include "ringkv.fullname" . }}
{{- end }}
{{- end }}

{{/*
The value of key KEY of Secret NAME in the release's namespace as the cluster holds it
(base64, as in .data), or "" (no such Secret or key, or `helm template`, which has no
cluster to ask): (dict "ctx" $ "name" NAME "key" KEY). What the chart generated once is
kept on upgrade this way.
*/}}
{{- define "ringkv.existingSecretData" -}}
{{- $secret := lookup "v1" "Secret" .ctx.Release.Namespace .name }}
{{- if $secret }}{{ index ($secret.data | default dict) .key | default "" }}{{ end }}
{{- end }}

{{/*
"true" when the nodes call the Kubernetes API, which needs the ServiceAccount
token: to read their own StatefulSet (ringkv.readsStatefulSet), or their Node's
zone label (ringkv.readsNodeZone). Empty otherwise. The cluster secret comes from
a Secret the kubelet mounts, never through the API.
*/}}
{{- define "ringkv.usesKubernetesApi" -}}
{{- if or (include "ringkv.readsStatefulSet" .) (include "ringkv.readsNodeZone" .) }}true{{ end }}
{{- end }}

{{/*
"true" when the nodes read their own StatefulSet, which needs the Role and the
RoleBinding: each discovery round (cluster.membershipFromStatefulSet), and a
stopping node (cluster.departure). Empty otherwise.
*/}}
{{- define "ringkv.readsStatefulSet" -}}
{{- if or .Values.cluster.departure.enabled .Values.cluster.membershipFromStatefulSet }}true{{ end }}
{{- end }}

{{/*
"true" when each node reads the zone label of its Node at start (cluster.zones.fromNodeLabel,
no zones by ordinal), which needs the ClusterRole and ClusterRoleBinding of
clusterrole.yaml. Empty otherwise.
*/}}
{{- define "ringkv.readsNodeZone" -}}
{{- if and .Values.cluster.zones.fromNodeLabel (not .Values.cluster.zones.byOrdinal) }}true{{ end }}
{{- end }}

{{/*
The name of the ClusterRole and ClusterRoleBinding that let the pods read Nodes:
cluster-scoped, so the namespace is in it, and two releases of the same name in two
namespaces do not share (or overwrite) them. <namespace>-<fullname>-node-reader; past
63 characters cut to 54 and followed by a hash of the whole, which keeps it unique.
*/}}
{{- define "ringkv.nodeReaderName" -}}
{{- $name := printf "%s-%s-node-reader" .Release.Namespace (include "ringkv.fullname" .) }}
{{- if gt (len $name) 63 }}
{{- printf "%s-%s" ($name | trunc 54 | trimSuffix "-") ($name | sha256sum | trunc 8) }}
{{- else }}
{{- $name }}
{{- end }}
{{- end }}

{{/*
Name of the Secret holding the tokens file (key tokens): security.existingSecret or
<fullname>-tokens, which the chart renders (secret-tokens.yaml).
*/}}
{{- define "ringkv.tokensSecretName" -}}
{{- .Values.security.existingSecret | default (printf "%s-tokens" (include "ringkv.fullname" .)) }}
{{- end }}

{{/*
Where the pods find the tokens file and the TLS files (fixed paths, mounted from the Secrets).
*/}}
{{- define "ringkv.tokensDir" -}}/etc/ringkv/security{{- end }}
{{- define "ringkv.tlsDir" -}}/etc/ringkv/tls{{- end }}
{{- define "ringkv.clusterSecretDir" -}}/etc/ringkv/cluster{{- end }}

{{/*
Name of the kubernetes.io/tls Secret (tls.crt, tls.key, ca.crt): tls.existingSecret or
<fullname>-tls, which cert-manager writes (certificate.yaml) or the chart renders (secret-tls.yaml).
*/}}
{{- define "ringkv.tlsSecretName" -}}
{{- .Values.tls.existingSecret | default (printf "%s-tls" (include "ringkv.fullname" .)) }}
{{- end }}

{{/*
Where <fullname>-tls comes from, decided here only: "existingSecret", "certManager" (the
cert-manager.io/v1 API is there and tls.certManager.enabled) or "generated" (genCA and
genSignedCert in secret-tls.yaml). Empty with TLS off.
*/}}
{{- define "ringkv.tlsSource" -}}
{{- if .Values.tls.enabled }}
{{- if .Values.tls.existingSecret }}existingSecret
{{- else if and .Values.tls.certManager.enabled (.Capabilities.APIVersions.Has "cert-manager.io/v1") }}certManager
{{- else }}generated
{{- end }}
{{- end }}
{{- end }}

{{/*
The names the certificate carries (YAML list): every pod by the headless Service, the
headless, client and metrics Services by every form of their names, and localhost (port-forwards).
*/}}
{{- define "ringkv.tlsDnsNames" -}}
{{- $ns := .Release.Namespace }}
{{- $domain := .Values.clusterDomain }}
{{- $headless := include "ringkv.headlessServiceName" . }}
{{- $names := list (printf "*.%s.%s.svc.%s" $headless $ns $domain) (printf "*.%s.%s.svc" $headless $ns) }}
{{- range $svc := list $headless (include "ringkv.fullname" .) (include "ringkv.metricsServiceName" .) }}
{{- $names = concat $names (list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.%s" $svc $ns $domain)) }}
{{- end }}
{{- $names = append $names "localhost" }}
{{- toYaml $names }}
{{- end }}

{{/*
Image tag of the application (defaults to the chart appVersion).
*/}}
{{- define "ringkv.imageTag" -}}
{{- .Values.image.tag | default .Chart.AppVersion | toString }}
{{- end }}

{{/*
Full application image reference.
*/}}
{{- define "ringkv.image" -}}
{{- printf "%s:%s" .Values.image.repository (include "ringkv.imageTag" .) }}
{{- end }}

{{/*
An image that defaults to the app image, which is on the node already (the helper containers need
no more than its shell tools): {"ctx": $, "image": <values with repository and tag>, "value": the
values' path, for the error}. An empty repository means the app image.
*/}}
{{- define "ringkv.imageOrApp" -}}
{{- if .image.repository }}
{{- $tag := required (printf "%s.tag is required when %s.repository is set" .value .value) .image.tag }}
{{- printf "%s:%s" .image.repository (toString $tag) }}
{{- else }}
{{- include "ringkv.image" .ctx }}
{{- end }}
{{- end }}

{{/*
Image of the volumePermissions init container (defaults to the app image).
*/}}
{{- define "ringkv.volumePermissionsImage" -}}
{{- include "ringkv.imageOrApp" (dict "ctx" . "image" .Values.volumePermissions.image "value" "volumePermissions.image") }}
{{- end }}

{{/*
Container memory limit in MiB, parsed from resources.limits.memory ("<n>Mi" or "<n>Gi").
*/}}
{{- define "ringkv.memoryLimitMiB" -}}
{{- $mem := toString (required "resources.limits.memory is required (the JVM heap is derived from it)" .Values.resources.limits.memory) }}
{{- if regexMatch "^[0-9]+Gi$" $mem }}
{{- mul (trimSuffix "Gi" $mem | atoi) 1024 }}
{{- else if regexMatch "^[0-9]+Mi$" $mem }}
{{- trimSuffix "Mi" $mem | atoi }}
{{- else }}
{{- fail (printf "resources.limits.memory must be <n>Mi or <n>Gi, got %q" $mem) }}
{{- end }}
{{- end }}

{{/*
Java heap in MiB: floor(memory limit MiB * jvm.heapPercent / 100).
*/}}
{{- define "ringkv.heapMiB" -}}
{{- $limit := include "ringkv.memoryLimitMiB" . | atoi }}
{{- $heap := div (mul $limit (int .Values.jvm.heapPercent)) 100 }}
{{- if lt $heap 64 }}
{{- fail (printf "computed JVM heap %dMiB is below 64MiB: raise resources.limits.memory or jvm.heapPercent" $heap) }}
{{- end }}
{{- $heap }}
{{- end }}

{{/*
Netty's direct memory in MiB: floor(memory limit MiB * jvm.directMemoryPercent / 100).
Without a cap the JVM allows as much as the heap, which the limit does not hold.
*/}}
{{- define "ringkv.directMemoryMiB" -}}
{{- div (mul (include "ringkv.memoryLimitMiB" . | atoi) (int .Values.jvm.directMemoryPercent)) 100 }}
{{- end }}

{{/*
RocksDB's memory budget in MiB (ringkv.storage.memory-size): floor(memory limit MiB *
storage.memoryPercent / 100). With the heap and direct memory it may take at most 85% of the
limit (so heap and direct memory at most 80%): the rest is the JVM's own memory and the
allocator's.
*/}}
{{- define "ringkv.storageMemoryMiB" -}}
{{- $total := add (int .Values.jvm.heapPercent) (int .Values.jvm.directMemoryPercent) (int .Values.storage.memoryPercent) }}
{{- if gt $total 85 }}
{{- fail (printf "jvm.heapPercent (%d) + jvm.directMemoryPercent (%d) + storage.memoryPercent (%d) must be at most 85: the rest of the memory limit is for the JVM itself" (int .Values.jvm.heapPercent) (int .Values.jvm.directMemoryPercent) (int .Values.storage.memoryPercent)) }}
{{- end }}
{{- $storage := div (mul (include "ringkv.memoryLimitMiB" . | atoi) (int .Values.storage.memoryPercent)) 100 }}
{{- if lt $storage 16 }}
{{- fail (printf "computed RocksDB memory %dMiB is below 16MiB: raise resources.limits.memory or storage.memoryPercent" $storage) }}
{{- end }}
{{- $storage }}
{{- end }}

{{/*
JAVA_TOOL_OPTIONS value.
*/}}
{{- define "ringkv.javaToolOptions" -}}
{{- $opts := printf "-Xmx%sm -XX:MaxDirectMemorySize=%sm" (include "ringkv.heapMiB" .) (include "ringkv.directMemoryMiB" .) }}
{{- with .Values.jvm.extraOptions }}
{{- $opts = printf "%s %s" $opts . }}
{{- end }}
{{- $opts }}
{{- end }}

{{/*
cluster.departure.timeout ("<n>s"), checked against terminationGracePeriodSeconds:
a node removed by a scale-down must finish handing over its data (and close
RocksDB) before the kubelet kills it, so the timeout must be at least 10s below
the grace period.
*/}}
{{- define "ringkv.departureTimeout" -}}
{{- $timeout := toString .Values.cluster.departure.timeout }}
{{- if not (regexMatch "^[1-9][0-9]*s$" $timeout) }}
{{- fail (printf "cluster.departure.timeout must be whole seconds such as 45s, got %q" $timeout) }}
{{- end }}
{{- $seconds := trimSuffix "s" $timeout | atoi }}
{{- $drain := include "ringkv.drainSeconds" . | atoi }}
{{- $grace := int .Values.terminationGracePeriodSeconds }}
{{- if gt (add $seconds $drain 10) $grace }}
{{- fail (printf "cluster.departure.timeout (%s) and shutdown.drainDelay (%ds) together must be at least 10s below terminationGracePeriodSeconds (%d): a node removed by a scale-down drains its clients, then must finish handing over its data before the kubelet kills it. Lower them or raise terminationGracePeriodSeconds to at least %d." $timeout $drain $grace (add $seconds $drain 10)) }}
{{- end }}
{{- $timeout }}
{{- end }}

{{/*
shutdown.drainDelay in whole seconds (RINGKV_SHUTDOWN_DRAIN_DELAY), refused otherwise.
*/}}
{{- define "ringkv.drainSeconds" -}}
{{- $delay := toString .Values.shutdown.drainDelay }}
{{- if not (regexMatch "^[0-9]+s$" $delay) }}
{{- fail (printf "shutdown.drainDelay must be whole seconds such as 5s, got %q" $delay) }}
{{- end }}
{{- trimSuffix "s" $delay }}
{{- end }}

{{/*
Name of the Service that publishes the management port for the ServiceMonitor
(metrics.serviceMonitor); Prometheus names the scrape job after it.
*/}}
{{- define "ringkv.metricsServiceName" -}}
{{- printf "%s-metrics" (include "ringkv.fullname" .) }}
{{- end }}

{{/*
Labels of the metrics Service: the common labels plus a component that the
other Services lack, so that the ServiceMonitor selects this one Service only
(selecting the others too would scrape every node twice, or on the wrong port).
*/}}
{{- define "ringkv.metricsLabels" -}}
{{ include "ringkv.labels" . }}
app.kubernetes.io/component: metrics
{{- end }}

{{/*
The series of this release's nodes in PromQL, as the ServiceMonitor labels
them: job is the metrics Service's name, namespace the release's.
*/}}
{{- define "ringkv.metricsSelector" -}}
{{- printf "job=%q, namespace=%q" (include "ringkv.metricsServiceName" .) .Release.Namespace }}
{{- end }}

{{/*
A Prometheus duration (30s, 1m30s; the schema checks the form) in milliseconds.
*/}}
{{- define "ringkv.promDurationMs" -}}
{{- $unitMs := dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000 "d" 86400000 "w" 604800000 "y" 31536000000 }}
{{- $ms := 0 }}
{{- range regexFindAll "[0-9]+[a-z]+" (toString .) -1 }}
{{- $n := regexFind "^[0-9]+" . }}
{{- $ms = add $ms (mul (atoi $n) (get $unitMs (trimPrefix $n .))) }}
{{- end }}
{{- $ms }}
{{- end }}

{{/*
What a client pod of the chart (the helm test, the k6 loadtest Job, the backup and restore Jobs)
needs to reach the nodes, with the least role it needs: (dict "ctx" $ "role" ROLE).
RINGKV_TOKEN, the token of key ROLE-token of the tokens Secret (security.enabled: the chart's
generated ones, or those of security.existingSecret), and the nodes' CA (ringkv.clientCaEnv).
*/}}
{{- define "ringkv.clientCredentialsEnv" -}}
{{- if .ctx.Values.security.enabled }}
- name: RINGKV_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "ringkv.tokensSecretName" .ctx }}
      key: {{ .role }}-token
{{- end }}
{{- include "ringkv.clientCaEnv" .ctx }}
{{- end }}

{{/*
SSL_CERT_FILE, the nodes' CA, which k6 (Go) then trusts instead of the system's roots, so that
only a certificate of the release counts (tls.enabled). An env entry, or nothing.
*/}}
{{- define "ringkv.clientCaEnv" -}}
{{- if .Values.tls.enabled }}
- name: SSL_CERT_FILE
  value: /etc/ringkv/ca/ca.crt
{{- end }}
{{- end }}

{{- define "ringkv.clientCaMount" -}}
{{- if .Values.tls.enabled }}
- name: ca
  mountPath: /etc/ringkv/ca
  readOnly: true
{{- end }}
{{- end }}

{{- define "ringkv.clientCaVolume" -}}
{{- if .Values.tls.enabled }}
- name: ca
  secret:
    secretName: {{ include "ringkv.tlsSecretName" . }}
    items:
      - key: ca.crt
        path: ca.crt
{{- end }}
{{- end }}

{{/*
"true" when the release has a client pod (the helm test, the loadtest Job, the backup CronJob, the
restore Job), each of which first waits for the release (ringkv.waitForReleaseContainer). Empty
otherwise.
*/}}
{{- define "ringkv.waitsForRelease" -}}
{{- if or .Values.tests.enabled .Values.loadtest.enabled .Values.backup.schedule .Values.restore.from }}true{{ end }}
{{- end }}

{{- define "ringkv.waitConfigMapName" -}}
{{- printf "%s-wait" (include "ringkv.fullname" .) }}
{{- end }}

{{/*
The init container that a client pod of the chart runs first: k6 (IMAGE, the pod's own k6 image,
whose entrypoint is k6) with files/wait-for-release.js, which polls GET /v0/status through the
client Service until it answers 200, at most waitForRelease.timeoutSeconds, and fails the pod
otherwise. With TLS only the release's CA is trusted. It needs no token (/v0/status is open):
(dict "ctx" $ "image" IMAGE "securityContext" CONTEXT). Mounts the volumes ringkv.waitForReleaseVolume
and ringkv.clientCaVolume.
*/}}
{{- define "ringkv.waitForReleaseContainer" -}}
{{- $ctx := .ctx -}}
- name: wait-for-release
  image: "{{ .image.repository }}:{{ .image.tag }}"
  imagePullPolicy: {{ .image.pullPolicy }}
  args:
    - run
    - --quiet
    - --no-color
    - /wait/wait-for-release.js
  env:
    - name: BASE_URL
      value: {{ include "ringkv.clientServiceUrl" $ctx | quote }}
    - name: WAIT_TIMEOUT_SECONDS
      value: {{ int $ctx.Values.waitForRelease.timeoutSeconds | quote }}
    - name: K6_NO_USAGE_REPORT
      value: "true"
    {{- include "ringkv.clientCaEnv" $ctx | nindent 4 }}
  securityContext:
    {{- toYaml .securityContext | nindent 4 }}
  {{- with $ctx.Values.waitForRelease.resources }}
  resources:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  volumeMounts:
    - name: wait
      mountPath: /wait
      readOnly: true
    {{- include "ringkv.clientCaMount" $ctx | nindent 4 }}
{{- end }}

{{- define "ringkv.waitForReleaseVolume" -}}
- name: wait
  configMap:
    name: {{ include "ringkv.waitConfigMapName" . }}
{{- end }}

{{/*
The client Service's URL, as a pod of the release's namespace reaches it.
*/}}
{{- define "ringkv.clientServiceUrl" -}}
{{- printf "%s://%s:%d" (include "ringkv.scheme" .) (include "ringkv.fullname" .) (int .Values.service.port) }}
{{- end }}

{{/*
The container security context of the helm test's and the backup and restore Jobs' k6 containers:
k6 needs no privileges and writes nothing.
*/}}
{{- define "ringkv.clientSecurityContext" -}}
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
capabilities:
  drop:
    - ALL
{{- end }}
