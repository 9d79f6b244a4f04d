"""Reads wire version 3 messages with Google's protobuf runtime and the shipped events.proto.

Used by test/scale-out/event-protobuf-libraries.scale-out.test.ts. Input (stdin): messages, each preceded by
its length as a 4-byte little-endian integer. Output (stdout): one JSON line per message, either
{"error": "..."} when the runtime refuses it, or the fields it read, values kept exact: doubles as
the hex of their 8 bytes, 64-bit integers as text, presence of `optional` fields as null/value,
and "reserialized": the hex of what the runtime writes back (SerializeToString).

  python protobuf_corpus.py <dir holding prestadores/events/v1/events_pb2.py>
"""
import json
import struct
import sys

sys.path.insert(0, sys.argv[1])
from google.protobuf.message import DecodeError  # noqa: E402
from prestadores.events.v1 import events_pb2  # noqa: E402

OPTIONAL = {f.name for f in events_pb2.VehicleEvent.DESCRIPTOR.fields if f.has_presence and f.message_type is None}


def value(field, v):
    if field.type == field.TYPE_DOUBLE:
        return struct.pack('<d', v).hex()
    if field.type in (field.TYPE_FIXED64, field.TYPE_SFIXED64, field.TYPE_INT64):
        return str(v)
    if field.message_type is not None:
        return [{"clave": s.clave, "valor": s.valor} for s in v]
    return v


def read(data):
    m = events_pb2.VehicleEvent()
    try:
        m.ParseFromString(data)
    except DecodeError as e:
        return {"error": str(e) or "DecodeError"}
    out = {}
    for field in m.DESCRIPTOR.fields:
        if field.name in OPTIONAL and not m.HasField(field.name):
            out[field.name] = None
        else:
            out[field.name] = value(field, getattr(m, field.name))
    out["reserialized"] = m.SerializeToString(deterministic=True).hex()
    return out


def main():
    data = sys.stdin.buffer.read()
    pos = 0
    out = sys.stdout
    while pos < len(data):
        (n,) = struct.unpack_from('<I', data, pos)
        pos += 4
        out.write(json.dumps(read(data[pos:pos + n])) + "\n")
        pos += n


main()
