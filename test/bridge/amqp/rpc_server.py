#!/usr/bin/env python
"""A request/reply service as RabbitMQ's RPC tutorial writes it, with pika and nothing of taskgate.

It consumes its request queue (durable, so requests outlive a broker restart), computes, and publishes the reply
to the request's `reply_to` with the request's `correlation_id` (persistent), then acknowledges the request.
A second connection consumes the cancel queue and logs what it hears. When the broker goes away it connects
again, as long-running pika services do.

Usage: python rpc_server.py AMQP_URL REQUEST_QUEUE CANCEL_QUEUE
A request is JSON: a number n (the n-th Fibonacci number comes back), or an object with "op":
  {"op": "fib", "n": 10}      -> 55
  {"op": "fail", "why": "x"}  -> {"error": "x"}
  {"op": "sleep", "s": 2}     -> {"slept": 2} after that many seconds (and keeps going when cancelled)
  {"op": "upper", ...}        -> a text/plain body comes back upper-cased
"""
import json
import sys
import threading
import time

import pika

URL, QUEUE, CANCEL_QUEUE = sys.argv[1], sys.argv[2], sys.argv[3]


def log(text):
    print(text, flush=True)


def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def answer(props, body):
    if props.content_type == "text/plain":
        return "text/plain", body.decode().upper()
    request = json.loads(body)
    if isinstance(request, int):
        return "application/json", json.dumps(fib(request))
    op = request.get("op")
    if op == "fib":
        return "application/json", json.dumps(fib(int(request["n"])))
    if op == "fail":
        return "application/json", json.dumps({"error": request.get("why", "failed")})
    if op == "sleep":
        time.sleep(float(request["s"]))
        return "application/json", json.dumps({"slept": request["s"]})
    return "application/json", json.dumps({"error": "unknown op %r" % op})


def on_request(ch, method, props, body):
    headers = props.headers or {}
    log(
        "request %s redelivered=%s reply_to=%s delivery_mode=%s content_type=%s x_source=%s traceparent=%s"
        % (
            props.correlation_id,
            method.redelivered,
            props.reply_to,
            props.delivery_mode,
            props.content_type,
            headers.get("x-source"),
            headers.get("traceparent"),
        )
    )
    content_type, response = answer(props, body)
    ch.basic_publish(
        exchange="",
        routing_key=props.reply_to,
        properties=pika.BasicProperties(
            correlation_id=props.correlation_id, content_type=content_type, delivery_mode=2
        ),
        body=response,
    )
    ch.basic_ack(delivery_tag=method.delivery_tag)
    log("replied %s" % props.correlation_id)


def on_cancel(ch, method, props, body):
    log("cancel %s" % body.decode())
    ch.basic_ack(delivery_tag=method.delivery_tag)


def serve(queue, callback, ready):
    while True:
        try:
            connection = pika.BlockingConnection(pika.URLParameters(URL))
            channel = connection.channel()
            channel.queue_declare(queue=queue, durable=True)
            channel.basic_qos(prefetch_count=1)
            channel.basic_consume(queue=queue, on_message_callback=callback)
            log(ready)
            channel.start_consuming()
        except pika.exceptions.AMQPError as error:
            log("connection lost (%s); reconnecting" % type(error).__name__)
            time.sleep(0.5)


threading.Thread(target=serve, args=(CANCEL_QUEUE, on_cancel, "awaiting cancel messages"), daemon=True).start()
serve(QUEUE, on_request, "awaiting RPC requests")
