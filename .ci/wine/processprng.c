/* processprng.c: a bcryptprimitives.dll stand-in for Wine builds that lack
 * ProcessPrng, which the Go runtime (1.22 and later) resolves at start.
 * It fills the buffer from RtlGenRandom (advapi32 SystemFunction036). */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buf, ULONG len);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
