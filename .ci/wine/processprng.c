/* Test fixture, never shipped: Debian's Wine 8.0 has no bcryptprimitives.dll, whose ProcessPrng
 * Rust's std (1.78+) imports at start-up. Real Windows has the DLL. This one forwards the call
 * to advapi32's RtlGenRandom (exported as SystemFunction036). */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
