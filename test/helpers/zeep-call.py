"""Calls the gateway with zeep (a client generated from our ?wsdl) over HTTPS with a private CA.

Usage: zeep-call.py <wsdl url> <ca file> <port name>; reads a JSON list of [operation, {args}] on
stdin, prints a JSON list of the results (zeep's parsed values, serialised) on stdout.
"""
import json
import sys

from requests import Session
from zeep import Client, Settings
from zeep.helpers import serialize_object
from zeep.transports import Transport

wsdl, ca, port = sys.argv[1:4]
session = Session()
# requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE override Session.verify: only the CA given here counts.
session.trust_env = False
session.verify = ca
client = Client(wsdl, transport=Transport(session=session), settings=Settings(strict=True))
service = client.bind("Service", port)
results = []
for operation, args in json.load(sys.stdin):
    value = getattr(service, operation)(**args)
    results.append(serialize_object(value))
print(json.dumps(results, default=str))
