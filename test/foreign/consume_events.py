# Reads the gateway's event topic (wire version 3) and prints each event once, as JSON.
#   protoc -I proto --python_out=. prestadores/events/v1/events.proto
#   pip install protobuf kafka-python
#   python consume_events.py 127.0.0.1:9092 gateway.events my-team-events
import json, os, sys
from google.protobuf.json_format import MessageToDict
from kafka import KafkaConsumer
from prestadores.events.v1.events_pb2 import VehicleEvent

PROTOBUF = b"application/x-protobuf; messageType=prestadores.events.v1.VehicleEvent"
brokers, topic, group = sys.argv[1:4]
consumer = KafkaConsumer(topic, bootstrap_servers=brokers.split(","), group_id=group,
                         auto_offset_reset="earliest", enable_auto_commit=True,
                         consumer_timeout_ms=float(os.environ.get("EXIT_AFTER_IDLE_MS", "inf")))
seen = set()  # the topic is at-least-once: a resent event comes again under its id
for record in consumer:
    if dict(record.headers).get("content-type") != PROTOBUF:
        continue  # an older wire version (EVENT_WIRE_VERSION 1 or 2): not ours to read
    event = VehicleEvent.FromString(record.value)
    if event.id in seen:
        continue
    seen.add(event.id)
    print(json.dumps(MessageToDict(event, preserving_proto_field_name=True)), flush=True)
