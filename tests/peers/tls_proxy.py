"""A TLS front for a plaintext Temporal dev server, for Baton's TLS tests.

`temporal server start-dev` has no TLS options, so the tests put this in front of a real one:
it terminates TLS (OpenSSL, through Python's ssl module), requires a client certificate signed
by its CA, offers HTTP/2 by ALPN, and forwards the bytes to the dev server.

It first writes into --dir a test PKI made with the `cryptography` package:
  ca.pem                 the CA that signs the server's and the client's certificates
  client.pem, client.key a client certificate signed by that CA
  other-ca.pem           a CA that signs nothing here (a wrong tls_ca)
  other-client.pem/.key  a client certificate signed by the other CA (refused)
The server's certificate is valid for the name `temporal.test` only, not for 127.0.0.1, so a
client must set its server name to connect.

Usage: tls_proxy.py --upstream 127.0.0.1:7233 --port PORT --dir DIR
Prints "ready" once it listens on 127.0.0.1:PORT.
"""

import argparse
import asyncio
import datetime
import pathlib
import ssl

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SERVER_NAME = "temporal.test"


def _name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _pem_key(key):
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _certificate(subject, key, issuer, issuer_key, *, ca, usage=None, dns=None):
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
    if usage:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if dns:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(dns)]), critical=False
        )
    return builder.sign(issuer_key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def _write_pki(directory):
    directory.mkdir(parents=True, exist_ok=True)
    issued = {}
    for prefix, ca_name in (("", "Baton test CA"), ("other-", "Some other CA")):
        ca_key = ec.generate_private_key(ec.SECP256R1())
        issued[prefix] = (ca_name, ca_key)
        (directory / f"{prefix}ca.pem").write_bytes(
            _certificate(ca_name, ca_key, ca_name, ca_key, ca=True)
        )
        client_key = ec.generate_private_key(ec.SECP256R1())
        (directory / f"{prefix}client.key").write_bytes(_pem_key(client_key))
        (directory / f"{prefix}client.pem").write_bytes(
            _certificate(
                f"{prefix}baton-worker", client_key, ca_name, ca_key,
                ca=False, usage=ExtendedKeyUsageOID.CLIENT_AUTH,
            )
        )
    ca_name, ca_key = issued[""]
    server_key = ec.generate_private_key(ec.SECP256R1())
    (directory / "server.key").write_bytes(_pem_key(server_key))
    (directory / "server.pem").write_bytes(
        _certificate(
            SERVER_NAME, server_key, ca_name, ca_key,
            ca=False, usage=ExtendedKeyUsageOID.SERVER_AUTH, dns=SERVER_NAME,
        )
    )


def _server_context(directory):
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(directory / "server.pem", directory / "server.key")
    context.load_verify_locations(directory / "ca.pem")
    context.verify_mode = ssl.CERT_REQUIRED
    context.set_alpn_protocols(["h2"])
    return context


async def _pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--port", required=True, type=int)
    parser.add_argument("--dir", required=True)
    args = parser.parse_args()
    directory = pathlib.Path(args.dir)
    _write_pki(directory)
    upstream_host, upstream_port = args.upstream.rsplit(":", 1)

    async def handle(client_reader, client_writer):
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(
                upstream_host, int(upstream_port)
            )
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(
            _pipe(client_reader, upstream_writer), _pipe(upstream_reader, client_writer)
        )

    async def serve():
        server = await asyncio.start_server(
            handle, "127.0.0.1", args.port, ssl=_server_context(directory)
        )
        print("ready", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
