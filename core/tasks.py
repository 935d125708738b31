"""Options shared by the Celery tasks of every app."""

from typing import TypedDict


class RedeliveryOptions(TypedDict):
    """Task options, spelled out so that `@shared_task(**REDELIVER_IF_LOST)` type-checks option by option."""

    acks_late: bool
    reject_on_worker_lost: bool


# Options of the tasks that may safely run twice: each converges on the same result (a hub sync upserts
# its rows, a reschedule re-evaluates against the stored decisions, a publish makes the hub match, a run
# step or a rolling round re-reads its state under its claim or lock). Their message is acknowledged
# only once the task returns, so the work of a worker that died is delivered again: by Redis after the
# visibility timeout when the whole worker died, at once when only its pool process did. The price: a
# task that kills its process every time (say, out of memory) comes back until someone purges it.
REDELIVER_IF_LOST: RedeliveryOptions = {"acks_late": True, "reject_on_worker_lost": True}
