# A package index's content for the package tests (700-images, 720-packages, 730-workflow):
# wheels made by hand with python3's zipfile, so no index or build tool is needed.

# mk_wheel DIR NAME VERSION: a pure-Python wheel, by hand (NAME.VALUE = 42).
mk_wheel() {
        python3 - "$@" <<'PY'
import base64, hashlib, sys, zipfile
d, name, ver = sys.argv[1:4]
files = {f"{name}/__init__.py": b"VALUE = 42\n",
         f"{name}-{ver}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {ver}\n".encode(),
         f"{name}-{ver}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: sbx-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
rec = [f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(c).digest()).rstrip(b'=').decode()},{len(c)}" for p, c in files.items()]
files[f"{name}-{ver}.dist-info/RECORD"] = ("\n".join(rec + [f"{name}-{ver}.dist-info/RECORD,,"]) + "\n").encode()
with zipfile.ZipFile(f"{d}/{name}-{ver}-py3-none-any.whl", "w") as z:
    for p, c in files.items():
        z.writestr(p, c)
PY
}
