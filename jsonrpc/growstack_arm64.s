#include "funcdata.h"
#include "textflag.h"

// func growStack()
// A 12 KiB frame: the prologue grows the stack to 16 KiB to fit it
// (see growstack_asm.go).
TEXT ·growStack(SB), 0, $12288-0
	NO_LOCAL_POINTERS
	RET
