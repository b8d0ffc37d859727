"""A JUnit XML file of a regression run, the format CI systems (GitLab, Jenkins, GitHub
actions' test reporters) read: one ``<testsuite>`` with a ``<testcase>`` per scene;
``failed`` and ``missing`` scenes carry a ``<failure>``, ``error`` ones an ``<error>``;
``updated`` ones pass with the update noted in ``<system-out>``."""
import datetime
import socket
import xml.etree.ElementTree as ET

from userio.outputs import write_bytes_atomic

from .metrics import NAMES


def junit_xml(cases, suite="raytrace regress", classname="regress"):
    """The XML document (bytes) for ``cases``."""
    failures = sum(c.status in ("failed", "missing") for c in cases)
    errors = sum(c.status == "error" for c in cases)
    total = sum(c.seconds for c in cases)
    root = ET.Element("testsuites", name=suite, tests=str(len(cases)), failures=str(failures),
                      errors=str(errors), time=f"{total:.3f}")
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)), failures=str(failures),
                       errors=str(errors), skipped="0", time=f"{total:.3f}",
                       timestamp=datetime.datetime.now().replace(microsecond=0).isoformat(),
                       hostname=socket.gethostname())
    for c in cases:
        tc = ET.SubElement(ts, "testcase", classname=classname, name=c.name, time=f"{c.seconds:.3f}",
                           file=str(c.scene))
        if c.status in ("failed", "missing"):
            kind = "ImageMismatch" if c.status == "failed" else "MissingReference"
            node = ET.SubElement(tc, "failure", message=c.message, type=kind)
            node.text = _details(c)
        elif c.status == "error":
            ET.SubElement(tc, "error", message=c.message, type="InputError").text = c.message
        else:
            ET.SubElement(tc, "system-out").text = _details(c)
    ET.indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n"


def _details(case):
    lines = [case.message] if case.message else []
    comp = case.comparison
    if comp is not None:
        for name in NAMES:
            v = comp.metrics.get(name)
            if v is not None:
                lines.append(f"{name} = {v:.6g}")
        if comp.ztest is not None:
            lines.append(comp.ztest.summary())
    if case.reference is not None:
        lines.append(f"reference: {case.reference}")
    return "\n".join(lines)


def write_junit(cases, path, suite="raytrace regress", classname="regress"):
    write_bytes_atomic(path, junit_xml(cases, suite, classname))
