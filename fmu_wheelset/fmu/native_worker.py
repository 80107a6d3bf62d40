"""The worker process of the native front end's out-of-process mode.

Started by the FMU's library (fmu_wheelset/fmu/native/out_of_process.c) when
WHEELSET_FMU_OUT_OF_PROCESS=1: it maps the shared region, loads the same
library with ctypes (in-process mode: it joins this interpreter, as in FMPy)
and runs each forwarded FMI call there. The layout is out_of_process.h's.
It exits when told to, or when its parent is gone.
"""
from __future__ import annotations

import ctypes
import mmap
import os
import struct
import sys

REGION_SIZE = 16 << 20
HEADER_SPACE = 4096
LOG_SIZE = 1 << 20
PAYLOAD_SIZE = REGION_SIZE - HEADER_SPACE - LOG_SIZE
MAGIC = 0x57534F50

(HELLO, INSTANTIATE, FREE, SET_DEBUG_LOGGING, SETUP_EXPERIMENT, ENTER_INIT, EXIT_INIT, TERMINATE,
 RESET, GET_REAL, GET_INTEGER, GET_BOOLEAN, GET_STRING, SET_REAL, SET_INTEGER, SET_BOOLEAN,
 SET_STRING, DO_STEP, GET_REAL_STATUS, GET_BOOLEAN_STATUS, GET_STATE, SET_STATE, FREE_STATE,
 SERIALIZE, DESERIALIZE, EXIT) = range(1, 27)


class Header(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_uint32), ("version", ctypes.c_uint32),
                ("request_seq", ctypes.c_uint32), ("response_seq", ctypes.c_uint32),
                ("command", ctypes.c_uint32), ("status", ctypes.c_int32),
                ("count", ctypes.c_uint32), ("flag", ctypes.c_uint32),
                ("real_args", ctypes.c_double * 3), ("handle", ctypes.c_uint64),
                ("payload_used", ctypes.c_uint64), ("log_count", ctypes.c_uint32),
                ("log_used", ctypes.c_uint32), ("worker_pid", ctypes.c_int32),
                ("reserved", ctypes.c_uint32 * 7)]


LOGGER = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_char_p, ctypes.c_char_p)
ALLOCATE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
FREE_MEMORY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class Callbacks(ctypes.Structure):
    _fields_ = [("logger", LOGGER), ("allocateMemory", ALLOCATE), ("freeMemory", FREE_MEMORY),
                ("stepFinished", ctypes.c_void_p), ("componentEnvironment", ctypes.c_void_p)]


def _open_region(name: str) -> mmap.mmap:
    if os.name == "nt":
        return mmap.mmap(-1, REGION_SIZE, tagname=name)
    import _posixshmem
    fd = _posixshmem.shm_open(name, os.O_RDWR, mode=0o600)
    try:
        return mmap.mmap(fd, REGION_SIZE)
    finally:
        os.close(fd)


def _parent_watch():
    """A function telling whether the host process is still there. POSIX: the
    parent pid changes when the parent dies (the worker is re-parented);
    Windows: it does not, so the parent's process handle is asked."""
    parent = os.getppid()
    if os.name != "nt":
        return lambda: os.getppid() == parent
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    kernel32.OpenProcess.restype = ctypes.c_void_p
    kernel32.OpenProcess.argtypes = [ctypes.c_uint32, ctypes.c_int, ctypes.c_uint32]
    kernel32.WaitForSingleObject.restype = ctypes.c_uint32
    kernel32.WaitForSingleObject.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    synchronize, wait_timeout = 0x00100000, 0x102
    handle = kernel32.OpenProcess(synchronize, 0, parent)
    if not handle:
        return lambda: True          # cannot watch: the parent's timeout kills us instead
    return lambda: kernel32.WaitForSingleObject(handle, 0) == wait_timeout


_INT_FUNCTIONS = (
    "fmi2FreeInstance", "fmi2SetDebugLogging", "fmi2SetupExperiment",
    "fmi2EnterInitializationMode", "fmi2ExitInitializationMode", "fmi2Terminate", "fmi2Reset",
    "fmi2GetReal", "fmi2GetInteger", "fmi2GetBoolean", "fmi2GetString", "fmi2SetReal",
    "fmi2SetInteger", "fmi2SetBoolean", "fmi2SetString", "fmi2DoStep", "fmi2GetRealStatus",
    "fmi2GetBooleanStatus", "fmi2GetFMUstate", "fmi2SetFMUstate", "fmi2FreeFMUstate",
    "fmi2SerializedFMUstateSize", "fmi2SerializeFMUstate", "fmi2DeSerializeFMUstate")


def _load_library(library_path: str):
    """The FMU's library (in-process mode) with the signatures the worker calls."""
    lib = ctypes.CDLL(library_path)
    lib.wheelset_worker_wait.restype = ctypes.c_uint32
    lib.wheelset_worker_wait.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int]
    lib.wheelset_worker_done.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    lib.fmi2Instantiate.restype = ctypes.c_void_p
    lib.fmi2Instantiate.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                                    ctypes.POINTER(Callbacks), ctypes.c_int, ctypes.c_int]
    for name in _INT_FUNCTIONS:
        getattr(lib, name).restype = ctypes.c_int
    lib.fmi2SetupExperiment.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_double,
                                        ctypes.c_int, ctypes.c_double]
    lib.fmi2DoStep.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_double, ctypes.c_int]
    lib.fmi2FreeInstance.restype = None
    for name in ("fmi2GetReal", "fmi2GetInteger", "fmi2GetBoolean", "fmi2SetReal",
                 "fmi2SetInteger", "fmi2SetBoolean"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                       ctypes.c_void_p]
    return lib


class Worker:
    """The worker's side of the shared region (out_of_process.h's layout): one
    FMU instance, its FMU states by handle, the log entries of the call."""

    def __init__(self, library_path: str, region_name: str):
        self.region = _open_region(region_name)
        self.base = ctypes.addressof(ctypes.c_char.from_buffer(self.region))
        self.header = Header.from_address(self.base)
        if self.header.magic != MAGIC:
            sys.exit("wheelset worker: the shared region is not the FMU's")
        self.payload = self.base + HEADER_SPACE
        self.log_base = self.base + REGION_SIZE - LOG_SIZE
        self.log_used = 0
        self.lib = lib = _load_library(library_path)
        libc_calloc = ctypes.CDLL(None).calloc
        libc_calloc.restype = ctypes.c_void_p
        libc_calloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
        libc_free = ctypes.CDLL(None).free
        libc_free.argtypes = [ctypes.c_void_p]
        self.callbacks = Callbacks(LOGGER(self.logger), ALLOCATE(libc_calloc),
                                   FREE_MEMORY(libc_free), None, None)
        self.getters_setters = {GET_REAL: lib.fmi2GetReal, GET_INTEGER: lib.fmi2GetInteger,
                                GET_BOOLEAN: lib.fmi2GetBoolean, SET_REAL: lib.fmi2SetReal,
                                SET_INTEGER: lib.fmi2SetInteger, SET_BOOLEAN: lib.fmi2SetBoolean}
        self.component = None
        self.states = {}
        self.next_state = 1

    def logger(self, env, instance, status, category, message, text):
        # the front end always logs ("%s", text)
        body = text if message == b"%s" and text is not None else (message or b"")
        cat = (category or b"")[:63]
        entry = struct.pack("<III", int(status), len(cat), len(body)) + cat + body
        if self.log_used + len(entry) <= LOG_SIZE:
            ctypes.memmove(self.log_base + self.log_used, entry, len(entry))
            self.log_used += len(entry)
            self.header.log_count += 1
            self.header.log_used = self.log_used

    def strings_at(self, offset: int, count: int):
        out = []
        region = self.region
        for _ in range(count):
            (n,) = struct.unpack_from("<I", region, HEADER_SPACE + offset)
            out.append(bytes(region[HEADER_SPACE + offset + 4:HEADER_SPACE + offset + 4 + n]))
            offset += 4 + n
        return out

    def run(self) -> None:
        lib, header, base = self.lib, self.header, self.base
        parent_alive = _parent_watch()
        seq = 0
        while True:
            new = lib.wheelset_worker_wait(base, seq, 100)
            if new == 0:
                if not parent_alive():
                    os._exit(0)          # the host is gone
                continue
            seq = new
            if header.command == EXIT:
                lib.wheelset_worker_done(base, seq)
                os._exit(0)
            header.status = self.call(header.command, header.count)
            lib.wheelset_worker_done(base, seq)
            self.log_used = 0

    def call(self, command: int, n: int) -> int:
        """One forwarded FMI call: its status (3, fmi2Error, for a call without an
        instance or an unknown command)."""
        lib, header, component = self.lib, self.header, self.component
        vr = self.payload
        values = self.payload + ((n * 4 + 7) & ~7)
        if command == HELLO:
            header.worker_pid = os.getpid()
            return 0
        if command == INSTANTIATE:
            name, guid, uri = self.strings_at(0, 3)
            self.component = lib.fmi2Instantiate(name, 1, guid, uri, ctypes.byref(self.callbacks),
                                                 0, int(header.flag))
            return 0 if self.component else 3
        if component is None:
            return 3
        if command == DO_STEP:
            return lib.fmi2DoStep(component, header.real_args[0], header.real_args[1], header.flag)
        if command in self.getters_setters:
            return self.getters_setters[command](component, vr, n, values)
        if command in (SET_STRING, GET_STRING):
            return self.strings(command, n)
        if command == SETUP_EXPERIMENT:
            return lib.fmi2SetupExperiment(component, header.flag & 1, header.real_args[0],
                                           header.real_args[1], (header.flag >> 1) & 1,
                                           header.real_args[2])
        if command == SET_DEBUG_LOGGING:
            return lib.fmi2SetDebugLogging(ctypes.c_void_p(component), int(header.flag),
                                           ctypes.c_size_t(0), None)
        if command in (ENTER_INIT, EXIT_INIT, TERMINATE, RESET):
            function = {ENTER_INIT: lib.fmi2EnterInitializationMode,
                        EXIT_INIT: lib.fmi2ExitInitializationMode,
                        TERMINATE: lib.fmi2Terminate, RESET: lib.fmi2Reset}[command]
            return function(ctypes.c_void_p(component))
        if command == GET_REAL_STATUS:
            value = ctypes.c_double()
            status = lib.fmi2GetRealStatus(ctypes.c_void_p(component), int(n), ctypes.byref(value))
            header.real_args[0] = value.value
            return status
        if command == GET_BOOLEAN_STATUS:
            value = ctypes.c_int()
            status = lib.fmi2GetBooleanStatus(ctypes.c_void_p(component), int(n), ctypes.byref(value))
            header.flag = 1 if value.value else 0
            return status
        if command in (GET_STATE, SET_STATE, FREE_STATE, SERIALIZE, DESERIALIZE):
            return self.fmu_state(command)
        return 3

    def strings(self, command: int, n: int) -> int:
        """fmi2SetString / fmi2GetString: the texts after the value references."""
        lib, component, region = self.lib, self.component, self.region
        vr = self.payload
        if command == SET_STRING:
            texts = self.strings_at((n * 4 + 7) & ~7, n)
            array = (ctypes.c_char_p * max(n, 1))(*texts)
            return lib.fmi2SetString(ctypes.c_void_p(component), ctypes.c_void_p(vr),
                                     ctypes.c_size_t(n), array)
        array = (ctypes.c_char_p * max(n, 1))()
        status = lib.fmi2GetString(ctypes.c_void_p(component), ctypes.c_void_p(vr),
                                   ctypes.c_size_t(n), array)
        if status <= 1:
            at = (n * 4 + 7) & ~7
            for i in range(n):
                text = array[i] or b""
                struct.pack_into("<I", region, HEADER_SPACE + at, len(text))
                region[HEADER_SPACE + at + 4:HEADER_SPACE + at + 4 + len(text)] = text
                at += 4 + len(text)
            self.header.payload_used = at
        return status

    def _new_handle(self, pointer) -> int:
        handle = self.next_state
        self.next_state += 1
        self.states[handle] = pointer
        return handle

    def fmu_state(self, command: int) -> int:
        """fmi2Get/Set/FreeFMUstate, fmi2Serialize/DeSerializeFMUstate: the states
        stay here, the host holds their handles."""
        lib, header, component, states = self.lib, self.header, self.component, self.states
        if command == GET_STATE:
            handle = header.handle
            state = ctypes.c_void_p(states.get(handle))
            status = lib.fmi2GetFMUstate(ctypes.c_void_p(component), ctypes.byref(state))
            if status <= 1:
                if handle in states:
                    states[handle] = state.value
                else:
                    header.handle = self._new_handle(state.value)
            return status
        if command == DESERIALIZE:
            used = header.payload_used
            state = ctypes.c_void_p()
            status = 3
            if used <= PAYLOAD_SIZE:
                status = lib.fmi2DeSerializeFMUstate(ctypes.c_void_p(component),
                                                     ctypes.c_void_p(self.payload),
                                                     ctypes.c_size_t(used), ctypes.byref(state))
            if status <= 1:
                header.handle = self._new_handle(state.value)
            return status
        pointer = states.get(header.handle)
        if pointer is None:
            return 3
        if command == SET_STATE:
            return lib.fmi2SetFMUstate(ctypes.c_void_p(component), ctypes.c_void_p(pointer))
        if command == FREE_STATE:
            state = ctypes.c_void_p(states.pop(header.handle))
            return lib.fmi2FreeFMUstate(ctypes.c_void_p(component), ctypes.byref(state))
        size = ctypes.c_size_t()
        status = lib.fmi2SerializedFMUstateSize(ctypes.c_void_p(component), ctypes.c_void_p(pointer),
                                                ctypes.byref(size))
        if status <= 1 and size.value <= PAYLOAD_SIZE:
            status = lib.fmi2SerializeFMUstate(ctypes.c_void_p(component), ctypes.c_void_p(pointer),
                                               ctypes.c_void_p(self.payload), size)
            header.payload_used = size.value
        elif status <= 1:
            status = 3
        return status


def main(library_path: str, region_name: str) -> None:
    os.environ["WHEELSET_FMU_OUT_OF_PROCESS"] = "0"
    Worker(library_path, region_name).run()
