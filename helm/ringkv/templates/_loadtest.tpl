{{/*
The k6 load test (loadtest.*): a ConfigMap with the scripts of loadtest/ and a Job running
kv.js against the client Service. The scripts reach the chart through the symlink
files/loadtest -> ../../../loadtest (helm follows it; `helm package` stores real copies).
*/}}

{{/*
The scripts put in the ConfigMap; helm/verify.sh checks they are byte-identical to loadtest/.
*/}}
{{- define "ringkv.loadtestScriptNames" -}}
fill.js kv.js lib.js
{{- end }}

{{- define "ringkv.loadtestConfigMapName" -}}
{{- printf "%s-loadtest" (include "ringkv.fullname" .) }}
{{- end }}

{{/*
The client Service, as the k6 pod (same namespace) reaches it.
*/}}
{{- define "ringkv.loadtestBaseUrl" -}}
{{- include "ringkv.clientServiceUrl" . }}
{{- end }}

{{/*
ConfigMap data: file name -> content, failing the render when a script is missing (for
example when files/loadtest is not the symlink, as on a checkout without symlink support).
*/}}
{{- define "ringkv.loadtestScripts" -}}
{{- $data := dict }}
{{- range $name := splitList " " (include "ringkv.loadtestScriptNames" .) }}
{{- $path := printf "files/loadtest/%s" $name }}
{{- $content := $.Files.Get $path }}
{{- if not $content }}
{{- fail (printf "loadtest.enabled: %s is missing from the chart; helm/ringkv/files/loadtest must be the symlink ../../../loadtest (git config core.symlinks true)" $path) }}
{{- end }}
{{- $_ := set $data $name $content }}
{{- end }}
{{- toYaml $data }}
{{- end }}

{{/*
The k6 container's environment: the settings of loadtest/lib.js (see loadtest/BENCHMARKS.md).
Integers go through `int`: helm holds YAML numbers as float64, which print as 1e+06.
*/}}
{{- define "ringkv.loadtestEnv" -}}
{{- $lt := .Values.loadtest -}}
- name: BASE_URL
  value: {{ include "ringkv.loadtestBaseUrl" . | quote }}
- name: SCENARIO
  value: {{ $lt.scenario | quote }}
- name: RATE
  value: {{ int $lt.rate | quote }}
- name: DURATION
  value: {{ $lt.duration | quote }}
- name: REPLICAS
  value: {{ $lt.replicas | quote }}
- name: KEYSPACE
  value: {{ int $lt.keyspace | quote }}
- name: DISTRIBUTION
  value: {{ $lt.distribution | quote }}
- name: VALUE_SIZE
  value: {{ int $lt.valueSize | quote }}
- name: P99_MS
  value: {{ $lt.p99Ms | toString | quote }}
- name: MAX_ERROR_RATE
  value: {{ $lt.maxErrorRate | toString | quote }}
# The store was filled (by the fill init container, or before) or not: if not, a GET may 404.
- name: FILLED
  value: {{ if eq $lt.fill "none" }}"0"{{ else }}"1"{{ end }}
# Only the text summary, on stdout: the root filesystem is read-only.
- name: SUMMARY_JSON
  value: none
- name: K6_NO_USAGE_REPORT
  value: "true"
{{- include "ringkv.clientCredentialsEnv" (dict "ctx" . "role" "write") }}
{{- range $name, $value := $lt.env }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end }}

{{/*
The HTML report (loadtest.report): k6's web dashboard, exported when the run ends; the report
container prints it.
*/}}
{{- define "ringkv.loadtestReportDir" -}}
/report
{{- end }}

{{- define "ringkv.loadtestReportFile" -}}
{{- include "ringkv.loadtestReportDir" . }}/report.html.gz
{{- end }}

{{/*
The web dashboard's settings for the k6 container (the run's, not the fill's).
*/}}
{{- define "ringkv.loadtestReportEnv" -}}
- name: K6_WEB_DASHBOARD
  value: "true"
# No dashboard server in the pod (nothing listens): the exported file is the report.
- name: K6_WEB_DASHBOARD_PORT
  value: "-1"
# One point of the charts per period (k6 widens it on long runs, to at most 2880 points).
- name: K6_WEB_DASHBOARD_PERIOD
  value: {{ .Values.loadtest.report.period | quote }}
# Written when the run ends, thresholds missed or not; gzipped, since the name ends with .gz.
- name: K6_WEB_DASHBOARD_EXPORT
  value: {{ include "ringkv.loadtestReportFile" . | quote }}
{{- end }}

{{/*
The report container: a native sidecar (an init container that keeps running; Kubernetes 1.29+),
which the kubelet stops only after k6 has exited, and so after k6 wrote the report. Stopped, it
prints the report base64-encoded to its log, which outlives the pod's run:
  kubectl logs job/<name> -c report | base64 -d | gunzip > report.html
The pod only counts as finished (and the Job as complete or failed) once it has stopped too.
*/}}
{{- define "ringkv.loadtestReportContainer" -}}
{{- $report := .Values.loadtest.report -}}
{{- $file := include "ringkv.loadtestReportFile" . -}}
- name: report
  image: {{ include "ringkv.imageOrApp" (dict "ctx" . "image" $report.image "value" "loadtest.report.image") }}
  imagePullPolicy: {{ $report.image.pullPolicy }}
  restartPolicy: Always
  # The log must hold the report alone: anything else goes to stderr (which the log also shows,
  # so that the fetch command fails visibly without a report). The shell runs the TERM trap as
  # soon as the current one-second sleep ends.
  command:
    - /bin/sh
    - -c
    - |
      print_report() {
        if [ -s {{ $file }} ]; then
          base64 {{ $file }}
        else
          echo "no report: k6 wrote none (it failed before its run ended; see its log: -c k6)" >&2
        fi
        exit 0
      }
      trap print_report TERM
      while :; do sleep 1; done
  securityContext:
    {{- toYaml .Values.loadtest.securityContext | nindent 4 }}
  {{- with $report.resources }}
  resources:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  volumeMounts:
    - name: report
      mountPath: {{ include "ringkv.loadtestReportDir" . }}
      readOnly: true
{{- end }}

{{/*
One k6 container running SCRIPT (a file of the ConfigMap): {"ctx": $, "name": ..., "script": ...,
"report": whether it writes the HTML report}.
*/}}
{{- define "ringkv.loadtestContainer" -}}
{{- $lt := .ctx.Values.loadtest -}}
- name: {{ .name }}
  image: "{{ $lt.image.repository }}:{{ $lt.image.tag }}"
  imagePullPolicy: {{ $lt.image.pullPolicy }}
  # The image's entrypoint is k6 (grafana/k6, ringkv-k6). --quiet: no progress lines (two per
  # second without a terminal), so the log is the summary (and fill.js's progress).
  args:
    - run
    - --quiet
    - --no-color
    - /scripts/{{ .script }}
  env:
    {{- include "ringkv.loadtestEnv" .ctx | nindent 4 }}
    {{- if .report }}
    {{- include "ringkv.loadtestReportEnv" .ctx | nindent 4 }}
    {{- end }}
  securityContext:
    {{- toYaml $lt.securityContext | nindent 4 }}
  {{- with $lt.resources }}
  resources:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  volumeMounts:
    - name: scripts
      mountPath: /scripts
      readOnly: true
    - name: tmp
      mountPath: /tmp
    {{- if .report }}
    - name: report
      mountPath: {{ include "ringkv.loadtestReportDir" .ctx }}
    {{- end }}
    {{- include "ringkv.clientCaMount" .ctx | nindent 4 }}
{{- end }}

{{/*
The Job's pod template (spec.template). Its hash names the Job (see ringkv.loadtestJobName).
*/}}
{{- define "ringkv.loadtestPodTemplate" -}}
{{- $report := .Values.loadtest.report.enabled -}}
metadata:
  labels:
    {{- include "ringkv.componentLabels" (dict "ctx" . "component" "loadtest") | nindent 4 }}
  annotations:
    # kubectl logs job/<name> without -c: k6's log, not the fill's or the report's.
    kubectl.kubernetes.io/default-container: k6
spec:
  restartPolicy: Never
  automountServiceAccountToken: false
  # No service environment variables: k6 reads K6_* variables, and a Service named k6 would
  # inject some.
  enableServiceLinks: false
  securityContext:
    {{- toYaml .Values.loadtest.podSecurityContext | nindent 4 }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  initContainers:
    # Nothing starts before the release answers through the client Service.
    {{- include "ringkv.waitForReleaseContainer" (dict "ctx" . "image" .Values.loadtest.image "securityContext" .Values.loadtest.securityContext) | nindent 4 }}
    {{- if $report }}
    {{- include "ringkv.loadtestReportContainer" . | nindent 4 }}
    {{- end }}
    {{- if eq .Values.loadtest.fill "init" }}
    # Fills the store (every key of KEYSPACE once) before the run, so every GET must find its key.
    {{- include "ringkv.loadtestContainer" (dict "ctx" . "name" "fill" "script" "fill.js") | nindent 4 }}
    {{- end }}
  containers:
    {{- include "ringkv.loadtestContainer" (dict "ctx" . "name" "k6" "script" "kv.js" "report" $report) | nindent 4 }}
  volumes:
    - name: scripts
      configMap:
        name: {{ include "ringkv.loadtestConfigMapName" . }}
    # k6 writes nothing by default; /tmp is there for what an extension or TMPDIR user needs.
    - name: tmp
      emptyDir:
        sizeLimit: 64Mi
    {{- if $report }}
    # The report: a few hundred KiB gzipped (k6 keeps at most 2880 points per chart).
    - name: report
      emptyDir:
        sizeLimit: 16Mi
    {{- end }}
    {{- include "ringkv.waitForReleaseVolume" . | nindent 4 }}
    {{- include "ringkv.clientCaVolume" . | nindent 4 }}
{{- end }}

{{/*
Name of the Job: <fullname>-loadtest-<hash of the pod template and the scripts>, at most 63
characters (the Job controller puts it in a label). A Job's pod template is immutable, so a
`helm upgrade` that changes it (other loadtest values, other scripts, a new chart) creates a
new Job and helm deletes the old one, instead of failing; an upgrade that leaves it alone leaves
the finished Job alone too.
*/}}
{{- define "ringkv.loadtestJobName" -}}
{{- $hash := print (include "ringkv.loadtestPodTemplate" .) (include "ringkv.loadtestScripts" .) (.Files.Get "files/wait-for-release.js") | sha256sum | trunc 8 }}
{{- printf "%s-loadtest-%s" (include "ringkv.fullname" . | trunc 45 | trimSuffix "-") $hash }}
{{- end }}
