#include "funcdata.h"
#include "textflag.h"

// func growStack()
// A 16 KiB frame: the prologue grows the stack to fit it (see
// growstack_asm.go).
TEXT ·growStack(SB), 0, $16384-0
	NO_LOCAL_POINTERS
	RET
