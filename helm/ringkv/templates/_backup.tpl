{{/*
Backups and restores (backup.*, restore.*): the nodes' settings (statefulset.yaml), the backup
CronJob (backup-cronjob.yaml) and the restore Job (restore-job.yaml). Both run k6 (tests.image,
whose entrypoint is k6; the project has no curl image) with a script of files/ against the nodes'
management port, with the admin token and the nodes' CA as the helm test pod has them
(ringkv.clientCredentialsEnv).
*/}}

{{/*
What the values may not combine, each refused with what to do; prints nothing. Included at the top
of statefulset.yaml, which every render has.
*/}}
{{- define "ringkv.backupChecks" -}}
{{- $b := .Values.backup }}
{{- if and (hasPrefix "s3://" $b.target) (not $b.existingSecret) }}
{{- fail (printf "backup.target is %s: backup.existingSecret is required, the name of a Secret with keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (the store's credentials)" $b.target) }}
{{- end }}
{{- if and $b.schedule (not $b.target) }}
{{- fail "backup.schedule needs backup.target: without a store the nodes refuse every backup (409)" }}
{{- end }}
{{- if and .Values.restore.from (not $b.target) }}
{{- fail "restore.from needs backup.target (and backup.existingSecret for s3://): the store that holds the backup" }}
{{- end }}
{{- if and .Values.restore.asOf (not .Values.restore.from) }}
{{- fail "restore.asOf needs restore.from: the backup to restore as of that time" }}
{{- end }}
{{- end }}

{{/*
The nodes' backup settings (with backup.target): env entries of the ringkv container.
*/}}
{{- define "ringkv.backupEnv" -}}
{{- with .Values.backup }}
{{- if .target }}
# Backups (backup.*): where to, how fast, how many kept; POST /actuator/backup asks for one.
- name: RINGKV_BACKUP_TARGET
  value: {{ .target | quote }}
{{- with .endpoint }}
- name: RINGKV_BACKUP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
- name: RINGKV_BACKUP_REGION
  value: {{ .region | quote }}
- name: RINGKV_BACKUP_RATE
  value: {{ .rate | quote }}
- name: RINGKV_BACKUP_KEEP
  value: {{ int .keep | quote }}
{{- with .existingSecret }}
# The store's credentials, which the AWS SDK reads from these variables.
- name: AWS_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: AWS_ACCESS_KEY_ID
- name: AWS_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: AWS_SECRET_ACCESS_KEY
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Every node's URL on PORT, pods 0..replicaCount-1 by the headless Service's DNS names, comma-separated:
(dict "ctx" $ "port" PORT).
*/}}
{{- define "ringkv.nodeUrls" -}}
{{- $ctx := .ctx }}
{{- $urls := list }}
{{- range $i := until (int $ctx.Values.replicaCount) }}
{{- $urls = append $urls (printf "%s://%s-%d.%s.%s.svc.%s:%d" (include "ringkv.scheme" $ctx) (include "ringkv.fullname" $ctx) $i (include "ringkv.headlessServiceName" $ctx) $ctx.Release.Namespace $ctx.Values.clusterDomain (int $.port)) }}
{{- end }}
{{- join "," $urls }}
{{- end }}

{{/*
Name of the CronJob: at most 52 characters, as Kubernetes wants (its Jobs add 11).
*/}}
{{- define "ringkv.backupCronJobName" -}}
{{- printf "%s-backup" (include "ringkv.fullname" . | trunc 45 | trimSuffix "-") }}
{{- end }}

{{- define "ringkv.backupConfigMapName" -}}
{{- printf "%s-backup" (include "ringkv.fullname" .) }}
{{- end }}

{{- define "ringkv.restoreConfigMapName" -}}
{{- printf "%s-restore" (include "ringkv.fullname" .) }}
{{- end }}

{{/*
The data of the ConfigMap a k6 pod mounts at /scripts (ringkv.actuatorClientPodSpec): files/SCRIPT and,
beside it, files/actuator-client.js, the helpers it imports (`./actuator-client.js`, which k6 resolves
next to the script): (dict "ctx" $ "script" SCRIPT).
*/}}
{{- define "ringkv.actuatorClientScripts" -}}
{{ .script }}: |
  {{- .ctx.Files.Get (printf "files/%s" .script) | nindent 2 }}
actuator-client.js: |
  {{- .ctx.Files.Get "files/actuator-client.js" | nindent 2 }}
{{- end }}

{{/*
A k6 pod's spec running SCRIPT from CONFIGMAP against the nodes: (dict "ctx" $ "component" NAME
"script" SCRIPT "configMap" CONFIGMAP "env" ENV_YAML "resources" RESOURCES), after the init container
that waits for the release (ringkv.waitForReleaseContainer). Locked down as the helm test pod: no
ServiceAccount token, non-root, read-only root filesystem, no capabilities.
*/}}
{{- define "ringkv.actuatorClientPodSpec" -}}
{{- $ctx := .ctx -}}
restartPolicy: Never
automountServiceAccountToken: false
# No service environment variables: k6 reads K6_* variables, and a Service named k6 would inject some.
enableServiceLinks: false
securityContext:
  runAsNonRoot: true
  runAsUser: 65534
  runAsGroup: 65534
  seccompProfile:
    type: RuntimeDefault
{{- with $ctx.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
initContainers:
  {{- include "ringkv.waitForReleaseContainer" (dict "ctx" $ctx "image" $ctx.Values.tests.image "securityContext" (include "ringkv.clientSecurityContext" $ctx | fromYaml)) | nindent 2 }}
containers:
  - name: {{ .component }}
    image: "{{ $ctx.Values.tests.image.repository }}:{{ $ctx.Values.tests.image.tag }}"
    imagePullPolicy: {{ $ctx.Values.tests.image.pullPolicy }}
    # The image's entrypoint is k6.
    args:
      - run
      - --quiet
      - --no-color
      - /scripts/{{ .script }}
    securityContext:
      {{- include "ringkv.clientSecurityContext" $ctx | nindent 6 }}
    {{- with .resources }}
    resources:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    env:
      {{- .env | nindent 6 }}
      - name: K6_NO_USAGE_REPORT
        value: "true"
      {{- include "ringkv.clientCredentialsEnv" (dict "ctx" $ctx "role" "admin") | nindent 6 }}
    volumeMounts:
      - name: scripts
        mountPath: /scripts
        readOnly: true
      {{- include "ringkv.clientCaMount" $ctx | nindent 6 }}
volumes:
  - name: scripts
    configMap:
      name: {{ .configMap }}
  {{- include "ringkv.waitForReleaseVolume" $ctx | nindent 2 }}
  {{- include "ringkv.clientCaVolume" $ctx | nindent 2 }}
{{- end }}

{{/*
The backup CronJob's k6 environment (files/backup.js): the nodes' management URLs, tried in turn.
*/}}
{{- define "ringkv.backupScriptEnv" -}}
- name: NODES
  value: {{ include "ringkv.nodeUrls" (dict "ctx" . "port" .Values.containerPorts.management) | quote }}
- name: TIMEOUT_SECONDS
  value: {{ int .Values.backup.timeoutSeconds | quote }}
{{- end }}

{{/*
The restore Job's k6 environment (files/restore.js): every node's client URL (GET /v0/status), node
0's management URL, the backup and the time, and the Job's deadline (the script fails itself
before k6 would end the run without an error).
*/}}
{{- define "ringkv.restoreScriptEnv" -}}
- name: STATUS_URLS
  value: {{ include "ringkv.nodeUrls" (dict "ctx" . "port" .Values.containerPorts.http) | quote }}
- name: MANAGEMENT_URL
  value: {{ printf "%s://%s-0.%s.%s.svc.%s:%d" (include "ringkv.scheme" .) (include "ringkv.fullname" .) (include "ringkv.headlessServiceName" .) .Release.Namespace .Values.clusterDomain (int .Values.containerPorts.management) | quote }}
- name: FROM
  value: {{ .Values.restore.from | quote }}
- name: AS_OF
  value: {{ .Values.restore.asOf | quote }}
- name: ATTEMPTS
  value: {{ int .Values.restore.attempts | quote }}
- name: DEADLINE_SECONDS
  value: {{ int .Values.restore.activeDeadlineSeconds | quote }}
{{- end }}

{{/*
The restore Job's pod template (spec.template). Its hash names the Job (ringkv.restoreJobName).
*/}}
{{- define "ringkv.restorePodTemplate" -}}
metadata:
  labels:
    {{- include "ringkv.componentLabels" (dict "ctx" . "component" "restore") | nindent 4 }}
spec:
  {{- include "ringkv.actuatorClientPodSpec" (dict "ctx" . "component" "restore" "script" "restore.js" "configMap" (include "ringkv.restoreConfigMapName" .) "env" (include "ringkv.restoreScriptEnv" .) "resources" .Values.restore.resources) | nindent 2 }}
{{- end }}

{{/*
Name of the restore Job: <fullname>-restore-<hash of its pod template and scripts>, at most 63
characters. A Job's pod template is immutable: an upgrade with another restore.from (or asOf)
creates a new Job (helm deletes the old one) instead of failing; an upgrade that leaves them alone
leaves the finished Job alone, and so does not restore again.
*/}}
{{- define "ringkv.restoreJobName" -}}
{{- $hash := print (include "ringkv.restorePodTemplate" .) (include "ringkv.actuatorClientScripts" (dict "ctx" . "script" "restore.js")) | sha256sum | trunc 8 }}
{{- printf "%s-restore-%s" (include "ringkv.fullname" . | trunc 45 | trimSuffix "-") $hash }}
{{- end }}
