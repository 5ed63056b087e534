/* bcryptprimitives.dll for Wine 8, which has none. Rust's standard library on Windows
 * takes its random numbers (HashMap keys, temporary names) from ProcessPrng in that
 * DLL; here it is BCryptGenRandom with the system's preferred generator. Built by
 * .ci/windows.sh with MinGW and put in the Wine prefix's system32; Windows 10 and later
 * have the real DLL. */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0)
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
