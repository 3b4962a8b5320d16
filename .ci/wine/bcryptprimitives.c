/*
 * bcryptprimitives.dll for Wine 8, which does not provide it.
 *
 * Rust's standard library for Windows gets its random bytes (HashMap seeds and the like) from
 * bcryptprimitives!ProcessPrng. Wine 8 has no such DLL, so a Windows test binary fails to start.
 * This DLL exports that one function and fills the buffer from advapi32!SystemFunction036
 * (RtlGenRandom), Wine's CSPRNG, which reads the host's random source.
 *
 * ProcessPrng never fails on Windows, and callers do not check its result. If the CSPRNG fails,
 * the process is terminated rather than handing back predictable bytes.
 *
 * Built by .ci/windows:
 *   x86_64-w64-mingw32-gcc -shared -O2 -s -o bcryptprimitives.dll bcryptprimitives.c bcryptprimitives.def -ladvapi32
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk)) {
            TerminateProcess(GetCurrentProcess(), 0xC0000001 /* STATUS_UNSUCCESSFUL */);
            return FALSE;
        }
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved)
{
    (void)instance;
    (void)reason;
    (void)reserved;
    return TRUE;
}
