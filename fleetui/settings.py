"""Django settings for the Fleet Placement Dashboard.

Everything that differs between a laptop, CI and production comes from environment variables
(see README "Configuration"); the helpers in fleetui.env parse them.
"""

import os
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import django_stubs_ext
from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.conf import global_settings
from django.core.exceptions import ImproperlyConfigured

from fleetui.env import database_config, env_bool, env_int, env_list, env_str, secret_key

# Django's generic classes (ModelAdmin, ModelForm, BaseFormSet, model fields) take the type arguments
# the type checker wants, e.g. `admin.ModelAdmin[Hub]`, only once patched to accept them at run time.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

# pytest (>= 8.2) exports PYTEST_VERSION for the whole run, so tests need no SECRET_KEY.
TESTING = "PYTEST_VERSION" in os.environ

DEBUG = env_bool("DEBUG", default=False)
SECRET_KEY = secret_key(env_str("SECRET_KEY"), debug=DEBUG, testing=TESTING)
# Read by the system check and the web entry points: Django raises on any read of an empty SECRET_KEY.
SECRET_KEY_CONFIGURED = bool(SECRET_KEY)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
# HTTPS=1 when the site is served over TLS (directly or behind a proxy that sets X-Forwarded-Proto):
# secure cookies, redirect to https, HSTS. Off by default so `make run` / `make up` work on plain http.
HTTPS = env_bool("HTTPS", default=False)
if HTTPS:
    SECURE_SSL_REDIRECT = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=False)
    if not SECURE_HSTS_PRELOAD:
        # the preload list is an operator's opt-in (hard to leave), not a default; say so to --deploy
        SILENCED_SYSTEM_CHECKS = ["security.W021"]
    # the health probe is plain http from inside the container or host
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
# Encrypts hub credentials at rest (inventory.credentials); a dev default only with DEBUG or tests.
FLEETUI_CREDENTIALS_KEY = env_str("FLEETUI_CREDENTIALS_KEY")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "django_htmx",
    "django_tables2",
    "drf_spectacular",
    # Swagger UI's files, served by the site itself (no CDN)
    "drf_spectacular_sidecar",
    "axes",
    "csp",
    # no models: its template tags (breadcrumbs)
    "core",
    "fleetui",
    "inventory",
    "placement",
    "placement.rollouts",
    "demohub",
]

MIDDLEWARE = [
    "fleetui.middleware.ServerTimingMiddleware",
    "fleetui.middleware.RequestIdMiddleware",
    # A body over DATA_UPLOAD_MAX_MEMORY_SIZE answers 413 with a message before anything reads it.
    "fleetui.middleware.RequestSizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # request.htmx: whether a request comes from htmx, which then gets the fragment it swaps in
    "django_htmx.middleware.HtmxMiddleware",
    # An htmx answer carries the messages it did not draw, swapped out of band into the page's notices.
    "core.middleware.HtmxMessagesMiddleware",
    # A page action that cannot queue its task (the broker is down) answers 503 with a message.
    "fleetui.taskqueue.TaskQueueUnavailableMiddleware",
    # Last, as django-axes asks: it turns a login refused during a lockout into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "fleetui.urls"
WSGI_APPLICATION = "fleetui.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "placement.rollouts.context_processors.approvals_badge",
            ],
        },
    },
]

DATABASES = {"default": database_config(env_str("DATABASE_URL"), VAR_DIR / "fleetui.sqlite3")}
if TESTING and DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Tests run on a file in WAL mode, as the site does: Django's in-memory test database shares one
    # cache between threads, whose table locks fail at once instead of waiting on the busy timeout, so
    # the watcher, the periodic runner and the live server could not write side by side there.
    _test_file = Path(tempfile.gettempdir()) / f"fleetui-test-{os.getpid()}.sqlite3"
    DATABASES["default"]["TEST"] = {"NAME": str(_test_file)}
# PostgreSQL compresses large values (specs, statuses, decision pages) with lz4 at half the CPU of its
# default pglz (PostgreSQL 14+; set DATABASE_TOAST_COMPRESSION=pglz for a server built without lz4).
# JIT compilation is off: the role checks' subqueries raise the planner's cost estimate of a
# 10,000-cluster count past jit_above_cost, and compiling took about 20 ms for a query that then ran
# in 3 ms; this application's queries are short (bench/pages.py).
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _compression = f"-c default_toast_compression={env_str('DATABASE_TOAST_COMPRESSION', 'lz4')}"
    _options["options"] = f"{_compression} -c jit=off {_options.get('options', '')}".strip()
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
if TESTING:
    # The tests create and sign in thousands of users: a PBKDF2 hash (a million iterations) costs about
    # a second of CPU each, most of the time of many tests, and protects nothing in a throwaway database.
    # Django's own hashers stay listed after the fast one, so a hash they made still verifies. The
    # processes a test starts (gunicorn, celery workers) inherit PYTEST_VERSION and hash alike.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher", *global_settings.PASSWORD_HASHERS]
# Login throttling (django-axes): 5 failed logins for one username from one address within 15 minutes
# lock that pair out for 15 minutes from the last of them, on the login page and the admin's alike; a
# successful login clears the count. The attempts are rows (axes' AccessAttempt, shown in the admin).
# Attempts during a lockout are refused without being recorded: each recorded one appends to its row,
# so a client hammering a locked login could otherwise grow that row (and its rewrites) without bound.
# Tests log in with force_login, which does not authenticate; Client.login must pass a request.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_CALLABLE = "fleetui.views.locked_out"
AXES_HTTP_RESPONSE_CODE = 429
# The log lines of failures and lockouts name the username and address (as the attempt rows do); the
# password is always masked.
AXES_SENSITIVE_PARAMETERS: list[str] = []
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# Content-Security-Policy (django-csp): scripts only from this site's own files, never inline or eval
# (htmx runs with allowEval off; page behaviour lives in static/js; Swagger UI's start script is a file).
# Styles allow 'unsafe-inline' because plotly.js injects its chart styles as <style> elements when it
# draws, and the browsable API's page carries its code highlighting in one; inline styles run no code.
# data: images are the ones plotly, the admin and Swagger UI embed in their stylesheets.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    },
}

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles"))
# Without collectstatic (runserver, tests) WhiteNoise serves straight from the app/static folders.
WHITENOISE_AUTOREFRESH = DEBUG or TESTING
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Compressed but not manifest-hashed: pages render without a prior collectstatic (tests, runserver).
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# Request bodies: 2.5 MiB at most (a 1 MiB manifest upload with its form, or a spec as JSON); larger
# ones answer 413 (fleetui.middleware.RequestSizeLimitMiddleware). Uploads stay in memory up to 1 MiB,
# the largest manifest file the loader reads (placement.scheduler.untrusted.MAX_BYTES).
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
FILE_UPLOAD_MAX_MEMORY_SIZE = 1_048_576

REST_FRAMEWORK = {
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # Browsers use the session (with CSRF); scripts use `Authorization: Token <key>` (drf_create_token).
    # Token first: anonymous API calls then answer 401 with `WWW-Authenticate: Token`, not 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # The domain's refusals (Django's ValidationError and PermissionDenied, the scheduler's ManifestError)
    # answer 400 / 403; a broker that is down 503 {"detail": "task queue unavailable, try again"}, not 500.
    "EXCEPTION_HANDLER": "fleetui.api.exception_handler",
    # JSON bodies with the size and nesting limits of every untrusted input (413 / 400 with a message)
    "DEFAULT_PARSER_CLASSES": [
        "fleetui.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Fleet Placement Dashboard API",
    "DESCRIPTION": "Clusters, cluster sets and placements across OCM and KubeFleet hubs.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # clusters and placements both have a `kind` choice field; name their enums apart
    "ENUM_NAME_OVERRIDES": {
        "ClusterKindEnum": "inventory.models.ManagedCluster.Kind",
        "PlacementKindEnum": "placement.models.Placement.Kind",
        # `outcome` is a generic name; the audit log's owns it explicitly
        "AuditOutcomeEnum": "inventory.models.AuditEntry.Outcome",
        # cluster-set and namespace roles both have a `role` choice field
        "ClusterSetRoleEnum": "inventory.models.ClusterSetRole.Role",
        "NamespaceRoleEnum": "inventory.models.NamespaceRole.Role",
    },
}

# Celery: with no broker configured, tasks run in-process (the embedded default for `make run`).
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
CELERY_TASK_EAGER_PROPAGATES = CELERY_TASK_ALWAYS_EAGER
if CELERY_BROKER_URL is None:
    # Keeps Celery from dialling its amqp:// default if something asks for a connection.
    CELERY_BROKER_URL = "memory://"
# The broker is not trusted: JSON only, never pickle.
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = TIME_ZONE
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 30 * 60)
# Redis gives a delivered message that was never acknowledged (its worker died) to another worker after
# this many seconds. It must exceed the longest task, or a task still running is delivered a second time.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 2 * CELERY_TASK_TIME_LIMIT),
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Seconds a hub may stay silent within one answer (a list page, a watch chunk) before the request fails.
HUB_REQUEST_TIMEOUT = env_int("HUB_REQUEST_TIMEOUT", 60)
# A sync renews its hub's lock and its SyncRun's heartbeat with every page. One silent for this long lost
# its worker: the next sync of the hub takes the lock over and marks that run failed.
HUB_SYNC_LEASE_SECONDS = env_int("HUB_SYNC_LEASE_SECONDS", 120)
# Periodic hub syncs: every 15 s beat enqueues the hubs whose own sync_interval_seconds has passed.
CELERY_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "sync-due-hubs": {"task": "inventory.tasks.sync_due_hubs", "schedule": 15.0},
    # Every placement re-evaluated every 10 minutes (PLACEMENT_RESYNC_SECONDS), as upstream's informer
    # resync re-queues them.
    "resync-placements": {
        "task": "placement.tasks.resync_placements",
        "schedule": float(env_int("PLACEMENT_RESYNC_SECONDS", 600)),
    },
    # Dashboard-owned staged update runs and rolling updates whose next step is due (a timed step, a
    # failed step's retry, a message a dead worker lost) are stepped within about 2 s of their due time.
    "reconcile-due-runs": {"task": "placement.tasks.reconcile_due_runs", "schedule": 2.0},
    "rolling-update-due-rounds": {"task": "placement.tasks.rolling_update_due_rounds", "schedule": 2.0},
    # Reschedules a hub change still owes (its run could not be queued: broker down; or failed) are queued
    # again; one indexed query when there are none.
    "sweep-pending-reschedules": {"task": "placement.tasks.sweep_pending_reschedules", "schedule": 5.0},
}
# A beat message not started within its own interval is dropped: the next one does the same work, so a
# worker that was stopped for a while does not come back to a backlog of identical runs.
for _entry in CELERY_BEAT_SCHEDULE.values():
    _entry.setdefault("options", {}).setdefault("expires", _entry["schedule"])
# Every task at this Redis priority step (0 is popped first, 9 last), so a hub change's leading reschedules
# (placement.tasks.LEADING_PRIORITY) overtake all queued work and the runs it cannot alter follow it.
CELERY_TASK_DEFAULT_PRIORITY = 3
# acks_late tasks (the hub sync) are re-delivered if a worker dies; one task at a time per process.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A `celery worker` lowers its CPU priority by this much (0 to 19; 0 keeps it) before it starts the
# processes that run the tasks: on a machine it shares with the site and the hub watcher, a full reschedule
# then takes the CPU they leave idle, and pages and what-ifs are not served at the pace of the batch work.
WORKER_NICENESS = env_int("WORKER_NICENESS", 10)
if not 0 <= WORKER_NICENESS <= 19:
    raise ImproperlyConfigured(f"WORKER_NICENESS={WORKER_NICENESS} is not between 0 and 19.")
# A full reschedule (resync) is split into chunks of at most this many placements, one task each, and
# into a multiple of RESCHEDULE_WORKERS chunks (the worker processes sharing it) so they share evenly.
RESCHEDULE_CHUNK_SIZE = env_int("RESCHEDULE_CHUNK_SIZE", 100)
RESCHEDULE_WORKERS = env_int("RESCHEDULE_WORKERS", 2)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
