// Reads the gateway's event topic (wire version 3) and hands each event to `onEvent` once.
//   npm install kafkajs protobufjs   (and events.proto from this repository's proto/ folder)
import { Kafka } from 'kafkajs';
import protobuf from 'protobufjs';

const PROTOBUF = 'application/x-protobuf; messageType=prestadores.events.v1.VehicleEvent';

export async function consumeEvents(brokers: string[], topic: string, group: string, protoFile: string, onEvent: (event: Record<string, unknown>) => void) {
  const root = await new protobuf.Root().load(protoFile, { keepCase: true }); // names as in events.proto
  const VehicleEvent = root.lookupType('prestadores.events.v1.VehicleEvent');
  const consumer = new Kafka({ clientId: group, brokers }).consumer({ groupId: group });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen = new Set<string>(); // the topic is at-least-once: a resent event comes again under its id
  await consumer.run({
    eachMessage: async ({ message }) => {
      if (message.headers?.['content-type']?.toString() !== PROTOBUF || !message.value) return; // an older wire version
      const event = VehicleEvent.toObject(VehicleEvent.decode(message.value), { longs: String }); // 64-bit integers as text
      if (seen.has(event.id as string)) return;
      seen.add(event.id as string);
      onEvent(event); // a field at its zero is left out; an `optional` one is left out when null
    },
  });
  return consumer; // consumer.disconnect() to stop
}
