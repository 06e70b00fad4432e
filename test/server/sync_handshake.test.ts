/**
 * The sync server's handshake and connection-level refusals, over real WebSockets: a proven
 * session is welcomed; a wrong proof, a session id not of its key, a frame before the handshake,
 * no common version, a text message and an oversize message each close the connection with
 * their code, and the server goes on serving others.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { CLOSE, encodeFrame, type Frame, PROTOCOL_VERSION } from "../../src/sync/protocol.ts";
import { helloFrame, newSession, RawClient, sign } from "../harness/sync_client.ts";
import { withSyncServer } from "../harness/sync_server.ts";

test("sync server: a session that proves its key is welcomed, and ping is answered", async () => {
  await withSyncServer({ open: true }, async (server) => {
    assert.match(server.url, /^ws:\/\/127\.0\.0\.1:\d+$/);
    const client = await RawClient.open(server.url);
    const session = await newSession();
    const challenge = await client.handshake(session);
    assert.equal(challenge.version, PROTOCOL_VERSION);
    assert.equal(challenge.nonce.length, 32);
    assert.equal(challenge.limits.maxFrame, 1 << 20);
    client.send({ type: "ping", n: 42 });
    assert.deepEqual(await client.next("pong"), { type: "pong", n: 42 });
    await client.close();
  });
});

test("sync server: each connection gets a fresh nonce; a proof for another nonce fails (4001)", async () => {
  await withSyncServer({ open: true }, async (server) => {
    const session = await newSession();
    const first = await RawClient.open(server.url);
    const second = await RawClient.open(server.url);
    for (const client of [first, second]) {
      client.send(helloFrame(session));
    }
    const [a, b] = [await first.next("challenge"), await second.next("challenge")];
    assert.notDeepEqual(Array.from(a.nonce), Array.from(b.nonce));
    assert.equal(a.serverId, b.serverId);
    // Replaying the first connection's proof on the second.
    second.send({ type: "prove", signature: await sign(session, a) });
    const error = await second.next("error");
    assert.equal(error.code, "E_AUTH");
    assert.equal((await second.closed).code, CLOSE.auth);
    first.send({ type: "prove", signature: await sign(session, a) });
    await first.next("welcome");
    await first.close();
  });
});

test("sync server: a proof signed by another key fails (4001)", async () => {
  await withSyncServer({ open: true }, async (server) => {
    const [session, other] = [await newSession(), await newSession()];
    const client = await RawClient.open(server.url);
    client.send(helloFrame(session));
    const challenge = await client.next("challenge");
    const forged = await sign({ ...other, session: session.session }, challenge);
    client.send({ type: "prove", signature: forged });
    assert.equal((await client.next("error")).code, "E_AUTH");
    assert.equal((await client.closed).code, CLOSE.auth);
  });
});

test("sync server: a session id that is not its public key's is refused (4001)", async () => {
  await withSyncServer({ open: true }, async (server) => {
    const [session, other] = [await newSession(), await newSession()];
    const client = await RawClient.open(server.url);
    client.send(helloFrame(session, { session: other.session }));
    assert.equal((await client.next("error")).code, "E_AUTH");
    assert.equal((await client.closed).code, CLOSE.auth);
    assert.equal(client.pending("challenge").length, 0, "no challenge for a wrong session id");
  });
});

test("sync server: any frame but hello then prove before welcome is a protocol error (4000)", async () => {
  await withSyncServer({ open: true }, async (server) => {
    const early = [
      { type: "subscribe", repo: "/data/x", cursor: null, versionVector: null },
      { type: "ping", n: 1 },
      { type: "prove", signature: new Uint8Array(64) },
      { type: "push", repo: "/data/x", id: 1, frames: [] },
    ] satisfies Frame[];
    for (const frame of early) {
      const client = await RawClient.open(server.url);
      client.send(frame);
      assert.equal((await client.next("error")).code, "E_PROTOCOL", frame.type);
      assert.equal((await client.closed).code, CLOSE.protocol, frame.type);
    }
    // After hello, only prove: a second hello is out of order too.
    const session = await newSession();
    const client = await RawClient.open(server.url);
    const hello: Frame = helloFrame(session);
    client.send(hello);
    await client.next("challenge");
    client.send(hello);
    assert.equal((await client.next("error")).code, "E_PROTOCOL");
    assert.equal((await client.closed).code, CLOSE.protocol);
  });
});

test("sync server: no version in common is E_UNSUPPORTED_VERSION (4002)", async () => {
  await withSyncServer({ open: true }, async (server) => {
    const session = await newSession();
    const client = await RawClient.open(server.url);
    // Version 1: a client from before chains were bound to their repository.
    client.send(helloFrame(session, { versions: [PROTOCOL_VERSION - 1, PROTOCOL_VERSION + 1] }));
    assert.equal((await client.next("error")).code, "E_UNSUPPORTED_VERSION");
    assert.equal((await client.closed).code, CLOSE.version);
  });
});

test("sync server: a text message closes 1003, an oversize one 1009; others are unaffected", async () => {
  await withSyncServer({ open: true, maxFrame: 4096 }, async (server) => {
    const bystander = await RawClient.connect(server.url);
    const texter = await RawClient.connect(server.url);
    texter.sendRaw("hello");
    assert.equal((await texter.closed).code, CLOSE.text);
    const large = await RawClient.connect(server.url);
    large.sendRaw(
      encodeFrame({ type: "push", repo: "/data/x", id: 1, frames: [new Uint8Array(5000)] }),
    );
    assert.equal((await large.closed).code, CLOSE.tooLarge);
    const early = await RawClient.open(server.url);
    early.sendRaw(new Uint8Array(4097));
    assert.equal((await early.closed).code, CLOSE.tooLarge);
    bystander.send({ type: "ping", n: 7 });
    assert.equal((await bystander.next("pong")).n, 7);
    await bystander.close();
  });
});

test("sync server: a client that does not finish the handshake is closed (4008)", async () => {
  await withSyncServer({ open: true, handshakeTimeoutMs: 200 }, async (server) => {
    const client = await RawClient.open(server.url);
    assert.equal((await client.closed).code, CLOSE.handshakeTimeout);
  });
});

test("sync server: a welcomed client that falls silent is closed after three heartbeats (4004)", async () => {
  await withSyncServer({ open: true, heartbeatMs: 100 }, async (server) => {
    const client = await RawClient.connect(server.url);
    assert.ok((await client.next("ping")).n >= 1);
    assert.equal((await client.closed).code, CLOSE.heartbeat);
  });
});
