{{/*
Names, labels, the checks every render passes, and the pieces both
Deployments share.
*/}}

{{- define "testfirst.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "testfirst.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* selector labels of one role: (list $ "app") */}}
{{- define "testfirst.selector" -}}
{{- $ := index . 0 -}}
app.kubernetes.io/name: {{ $.Chart.Name }}
app.kubernetes.io/instance: {{ $.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "testfirst.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{- define "testfirst.appServiceAccount" -}}
{{- .Values.app.serviceAccount.name | default (printf "%s-app" (include "testfirst.fullname" .)) -}}
{{- end -}}

{{- define "testfirst.graderServiceAccount" -}}
{{- .Values.grader.serviceAccount.name | default (printf "%s-grader" (include "testfirst.fullname" .)) -}}
{{- end -}}

{{/* where the secret files are mounted */}}
{{- define "testfirst.secretDir" -}}/etc/testfirst/secrets{{- end -}}

{{/*
testfirst.secretRef checks one entry of .Values.secrets: (list $ "webhookSecret").
A secret is only ever named here, {name, key}; a string (the secret itself)
or any other key is refused.
*/}}
{{- define "testfirst.secretRef" -}}
{{- $ := index . 0 -}}
{{- $field := index . 1 -}}
{{- $ref := index $.Values.secrets $field -}}
{{- if not (kindIs "map" $ref) -}}
{{- fail (printf "secrets.%s must be a reference to an existing Secret, {name: SECRET, key: KEY}, never the secret itself: create the Secret (kubectl create secret generic ...) and name it here" $field) -}}
{{- end -}}
{{- range $k, $_ := $ref -}}
{{- if not (has $k (list "name" "key")) -}}
{{- fail (printf "secrets.%s.%s: a secret reference holds only name and key; the value itself goes in the Secret, never in values" $field $k) -}}
{{- end -}}
{{- end -}}
{{- if or (not (kindIs "string" $ref.name)) (not (kindIs "string" $ref.key)) (empty $ref.name) (empty $ref.key) -}}
{{- fail (printf "secrets.%s needs name and key: the Secret in namespace %s and the key inside it that holds the value" $field $.Release.Namespace) -}}
{{- end -}}
{{- end -}}

{{/*
testfirst.validate fails the render on values that cannot work, each
message saying what to set. Included once, by the app's Deployment.
*/}}
{{- define "testfirst.validate" -}}
{{- $all := toYaml .Values -}}
{{- if contains "PRIVATE KEY-----" $all -}}
{{- fail "a private key is written in the values: put it in a Secret and name the Secret in secrets.githubPrivateKey" -}}
{{- end -}}
{{- if contains "AGE-SECRET-KEY-" (upper $all) -}}
{{- fail "an age identity (AGE-SECRET-KEY-...) is written in the values: identities go in Secrets named by secrets.graderIdentity and secrets.cardIdentity; store.graderRecipients and store.cardRecipients take the public recipients (age1...)" -}}
{{- end -}}
{{- range $field := list "databaseURL" "githubPrivateKey" "webhookSecret" "cardIdentity" "graderIdentity" -}}
{{- include "testfirst.secretRef" (list $ $field) -}}
{{- end -}}
{{- if .Values.secrets.operatorToken.name -}}
{{- include "testfirst.secretRef" (list $ "operatorToken") -}}
{{- end -}}
{{- if .Values.github.clientID -}}
{{- range $field := list "githubClientSecret" "sessionKey" -}}
{{- include "testfirst.secretRef" (list $ $field) -}}
{{- end -}}
{{- end -}}
{{- if not .Values.publicURL -}}
{{- fail "publicURL is required: the absolute https URL GitHub and users reach the app at, e.g. https://testfirst.example.com" -}}
{{- end -}}
{{- if not (regexMatch "^https?://[^/]+" .Values.publicURL) -}}
{{- fail (printf "publicURL %q: want an absolute http(s) URL, e.g. https://testfirst.example.com" .Values.publicURL) -}}
{{- end -}}
{{- if le (int64 .Values.github.appID) 0 -}}
{{- fail "github.appID is required: the GitHub App's numeric id (App settings, About); register the app first (docs/gke.md)" -}}
{{- end -}}
{{- if not (hasPrefix "gs://" .Values.store.url) -}}
{{- fail (printf "store.url %q: want the hidden-test bucket, gs://BUCKET/PREFIX; a file:// store would live in one pod's file system" .Values.store.url) -}}
{{- end -}}
{{- if not (regexMatch "^gs://[a-z0-9][a-z0-9._-]{1,221}[a-z0-9](/.*)?$" .Values.store.url) -}}
{{- fail (printf "store.url %q: the bucket name must be a valid GCS bucket name, e.g. gs://example-testfirst-hidden/tests" .Values.store.url) -}}
{{- end -}}
{{- range $field := list "graderRecipients" "cardRecipients" -}}
{{- $v := index $.Values.store $field | trim -}}
{{- if not $v -}}
{{- fail (printf "store.%s is required: the age recipients (age1..., public keys) printed by testfirst keys init" $field) -}}
{{- end -}}
{{- range $r := splitList " " (replace "," " " $v) -}}
{{- if and $r (not (hasPrefix "age1" $r)) -}}
{{- fail (printf "store.%s: %q is not an age recipient (age1...)" $field $r) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if eq .Values.sandbox.provider "docker" -}}
{{- fail "sandbox.provider docker is not supported by the chart: the grader would need the node's Docker socket mounted (root on the node), and GKE nodes run containerd, not dockerd. Use sandbox.provider kubernetes (with sandbox.runtimeClassName gvisor on GKE Sandbox), or run the Docker provider on a machine of its own (make run, the container image)" -}}
{{- end -}}
{{- if ne .Values.sandbox.provider "kubernetes" -}}
{{- fail (printf "sandbox.provider %q: want kubernetes" .Values.sandbox.provider) -}}
{{- end -}}
{{- if not .Values.sandbox.namespace -}}
{{- fail "sandbox.namespace is required with sandbox.provider kubernetes: the namespace the sandbox pods run in, holding nothing else, e.g. testfirst-sandbox" -}}
{{- end -}}
{{- if not (regexMatch "^[a-z0-9][a-z0-9._:/-]*@sha256:[0-9a-f]{64}$" (.Values.sandbox.image | default "")) -}}
{{- fail (printf "sandbox.image %q: want the grader image the cluster pulls, pinned by digest (registry.example/testfirst-grader@sha256:<64 hex digits>), pushed from testfirst image build's output" (.Values.sandbox.image | default "")) -}}
{{- end -}}
{{- if eq .Values.sandbox.namespace .Release.Namespace -}}
{{- fail (printf "sandbox.namespace %q is the release's own namespace: sandbox pods need a namespace of their own, where the grader may manage pods and nothing else may talk to them" .Values.sandbox.namespace) -}}
{{- end -}}
{{- if has .Values.sandbox.namespace (list "default" "kube-system" "kube-public" "kube-node-lease") -}}
{{- fail (printf "sandbox.namespace %q is a namespace of the cluster's own: choose one that holds only sandbox pods, e.g. testfirst-sandbox" .Values.sandbox.namespace) -}}
{{- end -}}
{{- if and .Values.app.serviceAccount.gcpServiceAccount (eq .Values.app.serviceAccount.gcpServiceAccount .Values.grader.serviceAccount.gcpServiceAccount) -}}
{{- fail "app.serviceAccount.gcpServiceAccount and grader.serviceAccount.gcpServiceAccount are one Google account: the app's may only create objects in the bucket and the grader's only read them, so they must be two" -}}
{{- end -}}
{{- if eq (include "testfirst.appServiceAccount" .) (include "testfirst.graderServiceAccount" .) -}}
{{- fail "app.serviceAccount.name and grader.serviceAccount.name are one Kubernetes service account: the two roles need two identities" -}}
{{- end -}}
{{- if and .Values.ingress.enabled (not .Values.ingress.host) -}}
{{- fail "ingress.enabled needs ingress.host: the host name of publicURL" -}}
{{- end -}}
{{- end -}}

{{/* the container securityContext of every testfirst container */}}
{{- define "testfirst.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
privileged: false
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* the pod securityContext of every testfirst pod */}}
{{- define "testfirst.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.podSecurityContext.runAsUser }}
runAsGroup: {{ .Values.podSecurityContext.runAsGroup }}
fsGroup: {{ .Values.podSecurityContext.fsGroup }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* the database URL, from its Secret */}}
{{- define "testfirst.databaseEnv" -}}
- name: TESTFIRST_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.secrets.databaseURL.name }}
      key: {{ .Values.secrets.databaseURL.key }}
{{- end -}}

{{/*
testfirst.secretSource is one source of a projected volume: (list $ "webhookSecret" "webhook-secret"),
the Secret's key written as the file of that name.
*/}}
{{- define "testfirst.secretSource" -}}
{{- $ := index . 0 -}}
{{- $ref := index $.Values.secrets (index . 1) -}}
- secret:
    name: {{ $ref.name }}
    items:
      - key: {{ $ref.key }}
        path: {{ index . 2 }}
{{- end -}}

{{/* probes on /healthz and /readyz, the same for both roles */}}
{{- define "testfirst.probes" -}}
startupProbe:
  httpGet:
    path: /healthz
    port: http
  periodSeconds: 5
  failureThreshold: 60
livenessProbe:
  httpGet:
    path: /healthz
    port: http
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
readinessProbe:
  httpGet:
    path: /readyz
    port: http
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 3
{{- end -}}
