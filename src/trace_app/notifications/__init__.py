"""People looking for someone, and telling them (issue 41; docs/notifications.md).

- :mod:`~trace_app.notifications.inquiries`: tracing requests (who is looking, their
  contacts, taken with consent), the audited reads of those contacts, erasure;
- :mod:`~trace_app.notifications.follow_ups`: "inform the family in person" after a death;
- :mod:`~trace_app.notifications.retention`: when an inquiry closes, and the purge of
  contacts a set number of days after (``trace inquiries purge``);
- :mod:`~trace_app.notifications.webhook_registry`: partner systems' webhook endpoints;
- the delivery side: :mod:`~trace_app.notifications.fan_out` (an outbox event becomes
  deliveries), :mod:`~trace_app.notifications.worker`, ``smtp``, ``webhooks``, ``mail``
  and ``links``.

The outbox's events are written by :mod:`trace_app.domain.status_events` in the
transaction of the change they report. This package imports the domain and the store,
never the web layer.
"""
